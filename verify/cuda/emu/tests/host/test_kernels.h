// Kernels compiled by nvcc-emu (test_kernels.cu) and host helpers that launch them with
// <<<>>>, so that the registration and launch path of the runtime stand-in is exercised by
// the code nvcc really generates.
#pragma once

#include <cuda_runtime_api.h>

struct ByValue {
  char bytes[40];
  double scale;
};

// add<<<grid, block, shared, stream>>>(a, b, n); returns cudaGetLastError().
cudaError_t launch_add(const float* a, float* b, int n, dim3 grid, dim3 block, size_t shared = 0,
                       cudaStream_t stream = nullptr);
// bounded (__launch_bounds__(128)) with `threads` threads.
cudaError_t launch_bounded(int* out, unsigned threads);
// uses_shared: 1024 static bytes of shared memory plus `dynamic_bytes`.
cudaError_t launch_uses_shared(float* out, size_t dynamic_bytes);
cudaError_t launch_by_value(ByValue value, float* out);

const void* add_function();
const void* uses_shared_function();
const void* by_value_function();
