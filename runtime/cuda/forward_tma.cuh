// The TMA descriptors of a CUDA forward kernel (sm90a, sm100a): Q, K and V loads and the O
// store, declared from the kernel's shared-memory tile layouts and built on the host from the
// caller's pointers and strides. Both architectures load with SM90_TMA_LOAD (sm_100a runs it
// unchanged for 1-CTA kernels).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

namespace kgen {
namespace cuda {

// A global tensor of shape (rows, features, head, batch) at no address: the type TMA
// descriptors are declared with.
template <class T, class Stride>
inline auto null_gmem() {
  return cute::make_tensor(cute::make_gmem_ptr(static_cast<T*>(nullptr)),
                           cute::Shape<int, int, int, int>{}, Stride{});
}

// Global tensors as the descriptors see them: (rows, features, head, batch) for Q, K and O,
// (features, rows, head, batch) for V; the feature dimension is contiguous.
using RowMajorStride = cute::Stride<int64_t, cute::_1, int64_t, int64_t>;
using ColumnMajorStride = cute::Stride<cute::_1, int64_t, int64_t, int64_t>;

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
    return ForwardTma{make_tma_copy(SM90_TMA_LOAD{}, tq, typename Traits::SmemLayoutQTile{}),
                      make_tma_copy(SM90_TMA_LOAD{}, tk, typename Traits::SmemLayoutKTile{}),
                      make_tma_copy(SM90_TMA_LOAD{}, tv, typename Traits::SmemLayoutVTile{}),
                      make_tma_copy(SM90_TMA_STORE{}, to, typename Traits::SmemLayoutO{})};
  }
};

}  // namespace cuda
}  // namespace kgen
