// Host helpers of the generated backward launchers: the TMA descriptors of Q, K, V, dO (loads)
// and dK, dV (stores), from the caller's pointers and strides. The argument checks are every
// CUDA launcher's (cuda/launch_checks.cuh).
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

#include "cuda/launch_checks.cuh"
#include "cuda/tma.cuh"
#include "sm90a/backward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct BackwardTmaFactory {
  using Traits = BackwardTraits<Config>;
  using Element = typename Config::Element;

  // Q, K and dK move (64, head_dim) tiles; V, dO and dV (64, head_dim_v) ones.
  template <class Arguments>
  static BackwardTma<Config> make(const Arguments& args) {
    using namespace cute;
    auto load = [](auto tile, const void* pointer, int rows, int heads, const auto& strides) {
      return make_tma_copy(
          SM90_TMA_LOAD{},
          cuda::row_major_tensor(static_cast<Element const*>(pointer), rows, int(size<1>(tile)),
                                 heads, Config::kBatch, strides),
          tile);
    };
    auto store = [](auto tile, void* pointer, int rows, int heads, const auto& strides) {
      return make_tma_copy(
          SM90_TMA_STORE{},
          cuda::row_major_tensor(static_cast<Element*>(pointer), rows, int(size<1>(tile)), heads,
                                 Config::kBatch, strides),
          tile);
    };
    const typename Traits::SmemLayoutK k_tile;
    const typename Traits::SmemLayoutV v_tile;
    return BackwardTma<Config>{
        load(k_tile, args.q, Config::kQLen, Config::kQHeads, args.q_strides),
        load(k_tile, args.k, Config::kKvLen, Config::kKvHeads, args.k_strides),
        load(v_tile, args.v, Config::kKvLen, Config::kKvHeads, args.v_strides),
        load(v_tile, args.dout, Config::kQLen, Config::kQHeads, args.dout_strides),
        store(k_tile, args.dk, Config::kKvLen, Config::kKvHeads, args.dk_strides),
        store(v_tile, args.dv, Config::kKvLen, Config::kKvHeads, args.dv_strides)};
  }
};

}  // namespace sm90a
}  // namespace kgen
