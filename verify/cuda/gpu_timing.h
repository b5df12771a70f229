// Timing a launch on a GPU with CUDA events, for the harnesses' --bench: three warm-up runs,
// then `iterations` timed ones, sorted (the median is the middle one).
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "device_buffers.h"

namespace kgen::sm90a {

inline std::vector<float> timed_runs_ms(const std::function<void()>& run, int iterations, cudaStream_t stream) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 3; ++w) run();
  std::vector<float> ms;
  for (int it = 0; it < iterations; ++it) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    run();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace kgen::sm90a
