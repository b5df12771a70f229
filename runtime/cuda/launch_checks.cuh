// Host checks every generated CUDA launcher makes before its first CUDA call: the alignment
// and strides TMA puts on pointers, and the facts of the current device. Shared by the sm90a
// and sm100a kernels (their launches differ only in the device they accept).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kgen {
namespace cuda {

inline bool aligned(const void* pointer, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

// TMA needs 16-byte aligned bases and strides that are positive multiples of 16 bytes below
// 2^40. `Strides` has batch, head and row strides in elements (the launcher header's).
template <class Element, class Strides>
bool valid_tma_strides(const Strides& strides) {
  constexpr int64_t kAlign = 16 / int64_t(sizeof(Element));
  constexpr int64_t kLimit = (int64_t(1) << 40) / int64_t(sizeof(Element));
  const int64_t all[] = {strides.batch, strides.head, strides.row};
  for (int64_t stride : all)
    if (stride <= 0 || stride % kAlign != 0 || stride >= kLimit) return false;
  return true;
}

struct DeviceFacts {
  int major = 0;
  int minor = 0;
  int shared_optin = 0;  // the most dynamic shared memory a block may opt in to, bytes
};

// The current device's compute capability and shared-memory limit.
inline cudaError_t query_current_device(DeviceFacts& facts) {
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&facts.major, cudaDevAttrComputeCapabilityMajor, device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&facts.minor, cudaDevAttrComputeCapabilityMinor, device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&facts.shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                   device);
  return error;
}

}  // namespace cuda
}  // namespace kgen
