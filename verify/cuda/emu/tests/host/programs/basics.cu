// An unmodified CUDA program built by nvcc-emu and run on ptxemu: a vector add, a
// shared-memory reduction with __syncthreads, and a kernel taking a __grid_constant__
// CUtensorMap that reads the map through its address. Prints PASS when every result checked
// on the host is right.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t error_ = (call);                                                     \
    if (error_ != cudaSuccess) {                                                     \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(error_));              \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Each block sums 256 values with a tree in shared memory.
__global__ void block_sums(const int* values, int* sums) {
  __shared__ int partial[256];
  int t = threadIdx.x;
  partial[t] = values[blockIdx.x * 256 + t];
  __syncthreads();
  for (int half = 128; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = partial[0];
}

// Reads the first 8 bytes and the last 8 bytes of the map through its address.
__global__ void read_tensor_map(const __grid_constant__ CUtensorMap map, unsigned long long* out) {
  const unsigned long long* words = reinterpret_cast<const unsigned long long*>(&map);
  out[0] = words[0];
  out[1] = words[15];
}

int main() {
  const int n = 1000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 0.5f * float(i);
  }
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  vector_add<<<(n + 127) / 128, 128>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (c[i] != 1.5f * float(i)) {
      std::printf("FAIL: vector_add c[%d] = %f\n", i, c[i]);
      return 1;
    }

  const int blocks = 4;
  std::vector<int> values(blocks * 256), sums(blocks);
  for (int i = 0; i < blocks * 256; ++i) values[i] = i % 97 - 40;
  int *dvalues, *dsums;
  CHECK(cudaMalloc(&dvalues, values.size() * sizeof(int)));
  CHECK(cudaMalloc(&dsums, blocks * sizeof(int)));
  CHECK(cudaMemcpy(dvalues, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice));
  block_sums<<<blocks, 256>>>(dvalues, dsums);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(sums.data(), dsums, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int block = 0; block < blocks; ++block) {
    int expected = 0;
    for (int t = 0; t < 256; ++t) expected += values[block * 256 + t];
    if (sums[block] != expected) {
      std::printf("FAIL: block_sums[%d] = %d, expected %d\n", block, sums[block], expected);
      return 1;
    }
  }

  alignas(64) CUtensorMap map;
  cuuint64_t dims[2] = {256, 4};
  cuuint64_t strides[1] = {256 * sizeof(int)};
  cuuint32_t box[2] = {64, 2};
  cuuint32_t element_strides[2] = {1, 1};
  CUresult encoded = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, dvalues, dims, strides, box,
                                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (encoded != CUDA_SUCCESS) {
    std::printf("FAIL: cuTensorMapEncodeTiled returned %d\n", int(encoded));
    return 1;
  }
  unsigned long long* dwords;
  CHECK(cudaMalloc(&dwords, 2 * sizeof(unsigned long long)));
  read_tensor_map<<<1, 32>>>(map, dwords);
  CHECK(cudaGetLastError());
  unsigned long long words[2];
  CHECK(cudaMemcpy(words, dwords, sizeof words, cudaMemcpyDeviceToHost));
  const unsigned long long* host_words = reinterpret_cast<const unsigned long long*>(&map);
  if (words[0] != host_words[0] || words[1] != host_words[15]) {
    std::printf("FAIL: the kernel read %llx %llx from the tensor map, the host has %llx %llx\n", words[0], words[1],
                host_words[0], host_words[15]);
    return 1;
  }

  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dvalues));
  CHECK(cudaFree(dsums));
  CHECK(cudaFree(dwords));
  std::printf("PASS\n");
  return 0;
}
