// Host helpers of the generated launchers: the argument checks TMA puts on pointers and
// strides, the facts of the current device, and the TMA descriptors of Q, K, V and O.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

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

// The TMA descriptors of one call, from the caller's pointers and strides. The argument
// checks of the launcher are every condition cuTensorMapEncodeTiled puts on these tensors.
template <class Config>
struct ForwardTmaFactory {
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;

  template <class Strides>
  static ForwardTma<Config> make(const void* q, const Strides& q_strides, const void* k,
                                 const Strides& k_strides, const void* v, const Strides& v_strides,
                                 void* out, const Strides& out_strides) {
    using namespace cute;
    // (rows, features, head, batch), features contiguous.
    auto rows = [](const void* pointer, int rows_, int features, int heads, const Strides& s) {
      return make_tensor(make_gmem_ptr(static_cast<Element const*>(pointer)),
                         make_shape(rows_, features, heads, Config::kBatch),
                         make_stride(s.row, _1{}, s.head, s.batch));
    };
    Tensor tq = rows(q, Config::kQLen, Config::kHeadDim, Config::kQHeads, q_strides);
    Tensor tk = rows(k, Config::kKvLen, Config::kHeadDim, Config::kKvHeads, k_strides);
    Tensor tv =
        make_tensor(make_gmem_ptr(static_cast<Element const*>(v)),
                    make_shape(Config::kHeadDimV, Config::kKvLen, Config::kKvHeads, Config::kBatch),
                    make_stride(_1{}, v_strides.row, v_strides.head, v_strides.batch));
    Tensor to =
        make_tensor(make_gmem_ptr(static_cast<Element*>(out)),
                    make_shape(Config::kQLen, Config::kHeadDimV, Config::kQHeads, Config::kBatch),
                    make_stride(out_strides.row, _1{}, out_strides.head, out_strides.batch));
    return ForwardTma<Config>{
        make_tma_copy(SM90_TMA_LOAD{}, tq, typename Traits::SmemLayoutQTile{}),
        make_tma_copy(SM90_TMA_LOAD{}, tk, typename Traits::SmemLayoutKTile{}),
        make_tma_copy(SM90_TMA_LOAD{}, tv, typename Traits::SmemLayoutVTile{}),
        make_tma_copy(SM90_TMA_STORE{}, to, typename Traits::SmemLayoutO{})};
  }
};

}  // namespace sm90a
}  // namespace kgen
