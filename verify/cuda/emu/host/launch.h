// What every kernel launch goes through, whichever API it came by (<<<>>> through
// __cudaLaunchKernel, cudaLaunchKernel, cudaLaunchKernelExC): the checks a real GPU makes
// before running anything, then Device::launch, whose findings become the sticky
// cudaErrorLaunchFailure (runtime_state.h).
#pragma once

#include <cuda_runtime_api.h>

#include "../core/device.h"
#include "registry.h"

namespace kgen::emu {

struct LaunchRequest {
  const char* api = "";  // named in reports
  RegisteredKernel* kernel = nullptr;
  dim3 grid, block;
  size_t dynamic_shared_bytes = 0;
  cudaStream_t stream = nullptr;
  void** args = nullptr;
  dim3 cluster{1, 1, 1};          // cudaLaunchAttributeClusterDimension (else the kernel's __cluster_dims__)
  bool explicit_cluster = false;  // the launch asked for clusters
};

cudaError_t launch_kernel(const LaunchRequest& request);

// The kernel's interface from its loaded module, loading the registered modules first (a
// module that fails to load is reported as a finding). On failure returns the error, already
// noted, and leaves `info` null.
cudaError_t loaded_kernel_info(const char* api, const RegisteredKernel* kernel, const KernelInfo*& info);

// How many blocks of `kernel` fit on one SM with `block_threads` threads and
// `dynamic_shared_bytes` of dynamic shared memory: the limits of threads, blocks and shared
// memory per SM. Registers are not counted (no ptxas runs, so their number is unknown).
int blocks_per_multiprocessor(const KernelInfo& info, int block_threads, size_t dynamic_shared_bytes);

}  // namespace kgen::emu
