// A planted bug: the kernel writes one element past its buffer. Built by nvcc-emu, the
// program must stop with a ptxemu: report and a nonzero exit status, although it never checks
// an error itself.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void write_past_the_end(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = i;  // the bug: <= instead of <
}

int main() {
  const int n = 64;
  int* out;
  cudaMalloc(&out, n * sizeof(int));
  write_past_the_end<<<1, 128>>>(out, n);
  cudaDeviceSynchronize();
  std::printf("the program went on after the out-of-bounds store\n");
  return 0;
}
