// The TMA descriptors of a CUDA forward kernel (sm90a, sm100a): Q, K and V loads and the O
// store, declared from the kernel's shared-memory tile layouts and built on the host from the
// caller's pointers and strides (cuda/tma.cuh). Both architectures load with SM90_TMA_LOAD
// (sm_100a runs it unchanged for 1-CTA kernels).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

#include "cuda/tma.cuh"

namespace kgen {
namespace cuda {

// The descriptors of one kernel: the first member of its Params, passed as a
// __grid_constant__ parameter so that the TMA unit reads them from parameter memory. `Traits`
// names Element and the tile layouts SmemLayoutQTile, SmemLayoutKTile, SmemLayoutVTile (V as
// (head_dim_v, block_kv)) and SmemLayoutO.
template <class Traits>
struct ForwardTma {
  using Element = typename Traits::Element;
  using Q = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{},
                                         null_gmem<Element const, RowMajorStride>(),
                                         typename Traits::SmemLayoutQTile{}));
  using K = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{},
                                         null_gmem<Element const, RowMajorStride>(),
                                         typename Traits::SmemLayoutKTile{}));
  using V = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{},
                                         null_gmem<Element const, ColumnMajorStride>(),
                                         typename Traits::SmemLayoutVTile{}));
  using O =
      decltype(cute::make_tma_copy(cute::SM90_TMA_STORE{}, null_gmem<Element, RowMajorStride>(),
                                   typename Traits::SmemLayoutO{}));
  Q q;
  K k;
  V v;
  O o;

  // From the caller's pointers and strides (the launcher header's Strides: batch, head, row in
  // elements). The launcher's argument checks are every condition cuTensorMapEncodeTiled puts
  // on these tensors.
  template <class Config, class Strides>
  static ForwardTma make(const void* q, const Strides& q_strides, const void* k,
                         const Strides& k_strides, const void* v, const Strides& v_strides,
                         void* out, const Strides& out_strides) {
    using namespace cute;
    Tensor tq = row_major_tensor(static_cast<Element const*>(q), Config::kQLen, Config::kHeadDim,
                                 Config::kQHeads, Config::kBatch, q_strides);
    Tensor tk = row_major_tensor(static_cast<Element const*>(k), Config::kKvLen, Config::kHeadDim,
                                 Config::kKvHeads, Config::kBatch, k_strides);
    Tensor tv =
        make_tensor(make_gmem_ptr(static_cast<Element const*>(v)),
                    make_shape(Config::kHeadDimV, Config::kKvLen, Config::kKvHeads, Config::kBatch),
                    make_stride(_1{}, v_strides.row, v_strides.head, v_strides.batch));
    Tensor to = row_major_tensor(static_cast<Element*>(out), Config::kQLen, Config::kHeadDimV,
                                 Config::kQHeads, Config::kBatch, out_strides);
    return ForwardTma{make_tma_copy(SM90_TMA_LOAD{}, tq, typename Traits::SmemLayoutQTile{}),
                      make_tma_copy(SM90_TMA_LOAD{}, tk, typename Traits::SmemLayoutKTile{}),
                      make_tma_copy(SM90_TMA_LOAD{}, tv, typename Traits::SmemLayoutVTile{}),
                      make_tma_copy(SM90_TMA_STORE{}, to, typename Traits::SmemLayoutO{})};
  }
};

}  // namespace cuda
}  // namespace kgen
