#include "test_kernels.h"

__global__ void add(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}

__global__ void __launch_bounds__(128) bounded(int* out) { out[threadIdx.x] = threadIdx.x; }

__global__ void uses_shared(float* out) {
  __shared__ float tile[256];
  extern __shared__ float more[];
  tile[threadIdx.x] = threadIdx.x;
  more[threadIdx.x] = tile[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = more[255 - threadIdx.x];
}

__global__ void by_value(ByValue value, float* out) { out[0] = value.bytes[3] * value.scale; }

cudaError_t launch_add(const float* a, float* b, int n, dim3 grid, dim3 block, size_t shared, cudaStream_t stream) {
  add<<<grid, block, shared, stream>>>(a, b, n);
  return cudaGetLastError();
}

cudaError_t launch_bounded(int* out, unsigned threads) {
  bounded<<<1, threads>>>(out);
  return cudaGetLastError();
}

cudaError_t launch_uses_shared(float* out, size_t dynamic_bytes) {
  uses_shared<<<1, 256, dynamic_bytes>>>(out);
  return cudaGetLastError();
}

cudaError_t launch_by_value(ByValue value, float* out) {
  by_value<<<1, 1>>>(value, out);
  return cudaGetLastError();
}

const void* add_function() { return reinterpret_cast<const void*>(add); }
const void* uses_shared_function() { return reinterpret_cast<const void*>(uses_shared); }
const void* by_value_function() { return reinterpret_cast<const void*>(by_value); }
