// The K/V ring of a CUDA forward kernel (sm90a, sm100a): one thread loads K and V of every kv
// tile its CTA visits, by TMA, into kStages shared-memory stages, each guarded by a full
// barrier (the TMA's transaction bytes) and an empty one (released by whoever read the stage).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/ring.cuh"
#include "cuda/work.cuh"

namespace kgen {
namespace cuda {

// `Traits`: kGroup, kKBytes, kVBytes, SmemLayoutK (block_kv, head_dim, stage) and SmemLayoutV
// (head_dim_v, block_kv, stage), and a SharedStorage with k, v and the barriers k_full,
// k_empty, v_full, v_empty per stage. Loads the work item's tiles [begin, end); `first`:
// how many tiles the ring carried before this work item (a persistent CTA's earlier items),
// so the stages and phases go on from there.
template <class Config, class Traits, class Params>
CUTE_DEVICE void load_kv_ring(Params const& params, typename Traits::SharedStorage& smem,
                              CtaWork const& work, int first, int begin, int end) {
  using namespace cute;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kHeadDimV = Config::kHeadDimV;
  constexpr int kBlockKv = Config::kBlockKv;
  constexpr int kStages = Config::kStages;
  const int kv_head = work.head / Traits::kGroup;

  Tensor mK = params.tma.k.get_tma_tensor(
      make_shape(Config::kKvLen, kHeadDim, Config::kKvHeads, Config::kBatch));
  Tensor mV = params.tma.v.get_tma_tensor(
      make_shape(kHeadDimV, Config::kKvLen, Config::kKvHeads, Config::kBatch));
  // (block_kv, head_dim, kv block), (head_dim_v, block_kv, kv block)
  Tensor gK = local_tile(mK(_, _, kv_head, work.batch), Shape<Int<kBlockKv>, Int<kHeadDim>>{},
                         make_coord(_, _0{}));
  Tensor gV = local_tile(mV(_, _, kv_head, work.batch), Shape<Int<kHeadDimV>, Int<kBlockKv>>{},
                         make_coord(_0{}, _));
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});
  auto [tKgK, tKsK] = tma_partition(params.tma.k, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sK),
                                    group_modes<0, 2>(gK));
  auto [tVgV, tVsV] = tma_partition(params.tma.v, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sV),
                                    group_modes<0, 2>(gV));

  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  CUTE_NO_UNROLL
  for (int t = begin; t < end; ++t) {
    const int kv_block = Config::tile_kv(tile_entry<Config>(work, t));
    const RingPosition<kStages> at = RingPosition<kStages>::at(first + t);
    const int stage = at.stage;
    Barrier::wait(&smem.k_empty[stage], at.empty_phase());
    Barrier::arrive_and_expect_tx(&smem.k_full[stage], Traits::kKBytes);
    copy(params.tma.k.with(smem.k_full[stage]), tKgK(_, kv_block), tKsK(_, stage));
    Barrier::wait(&smem.v_empty[stage], at.empty_phase());
    Barrier::arrive_and_expect_tx(&smem.v_full[stage], Traits::kVBytes);
    copy(params.tma.v.with(smem.v_full[stage]), tVgV(_, kv_block), tVsV(_, stage));
  }
}

}  // namespace cuda
}  // namespace kgen
