// Host helpers of the generated backward launchers: the TMA descriptors of Q, K, V, dO (loads)
// and dK, dV (stores), from the caller's pointers and strides. The argument checks are every
// CUDA launcher's (cuda/launch_checks.cuh).
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

#include "cuda/launch_checks.cuh"
#include "sm90a/backward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct BackwardTmaFactory {
  using Traits = BackwardTraits<Config>;
  using Element = typename Config::Element;

  // (rows, features, head, batch), features contiguous.
  template <class Pointer, class Strides>
  static auto tensor(Pointer* pointer, int rows, int heads, const Strides& s) {
    using namespace cute;
    return make_tensor(make_gmem_ptr(pointer),
                       make_shape(rows, Config::kHeadDim, heads, Config::kBatch),
                       make_stride(s.row, _1{}, s.head, s.batch));
  }

  template <class Arguments>
  static BackwardTma<Config> make(const Arguments& args) {
    using namespace cute;
    using Tile = typename Traits::SmemLayoutTile;
    auto load = [](const void* pointer, int rows, int heads, const auto& strides) {
      return make_tma_copy(SM90_TMA_LOAD{},
                           tensor(static_cast<Element const*>(pointer), rows, heads, strides),
                           Tile{});
    };
    auto store = [](void* pointer, int rows, int heads, const auto& strides) {
      return make_tma_copy(SM90_TMA_STORE{},
                           tensor(static_cast<Element*>(pointer), rows, heads, strides), Tile{});
    };
    return BackwardTma<Config>{load(args.q, Config::kQLen, Config::kQHeads, args.q_strides),
                               load(args.k, Config::kKvLen, Config::kKvHeads, args.k_strides),
                               load(args.v, Config::kKvLen, Config::kKvHeads, args.v_strides),
                               load(args.dout, Config::kQLen, Config::kQHeads, args.dout_strides),
                               store(args.dk, Config::kKvLen, Config::kKvHeads, args.dk_strides),
                               store(args.dv, Config::kKvLen, Config::kKvHeads, args.dv_strides)};
  }
};

}  // namespace sm90a
}  // namespace kgen
