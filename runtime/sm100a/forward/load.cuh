// The load warp: one elected thread issues every TMA load of the CTA, Q once and then K and V
// of every listed kv tile into the mbarrier-guarded ring, which the MMA thread's
// tcgen05.commit frees.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/work.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/sync.cuh"

namespace kgen {
namespace sm100a {

template <class Config, class Params>
CUTE_DEVICE void load(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem,
                      cuda::CtaWork const& work) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kHeadDimV = Config::kHeadDimV;
  constexpr int kBlockKv = Config::kBlockKv;
  constexpr int kStages = Config::kStages;
  if (work.tile_count == 0) return;  // nothing to load: the correction warps write zeros
  const int kv_head = work.head / Traits::kGroup;

  Tensor mQ = params.tma.q.get_tma_tensor(
      make_shape(Config::kQLen, kHeadDim, Config::kQHeads, Config::kBatch));
  Tensor mK = params.tma.k.get_tma_tensor(
      make_shape(Config::kKvLen, kHeadDim, Config::kKvHeads, Config::kBatch));
  Tensor mV = params.tma.v.get_tma_tensor(
      make_shape(kHeadDimV, Config::kKvLen, Config::kKvHeads, Config::kBatch));
  // (128, head_dim, q block), (block_kv, head_dim, kv block), (head_dim_v, block_kv, kv block)
  Tensor gQ = local_tile(mQ(_, _, work.head, work.batch), Shape<_128, Int<kHeadDim>>{},
                         make_coord(_, _0{}));
  Tensor gK = local_tile(mK(_, _, kv_head, work.batch), Shape<Int<kBlockKv>, Int<kHeadDim>>{},
                         make_coord(_, _0{}));
  Tensor gV = local_tile(mV(_, _, kv_head, work.batch), Shape<Int<kHeadDimV>, Int<kBlockKv>>{},
                         make_coord(_0{}, _));
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQTile{});
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});
  auto [tQgQ, tQsQ] = tma_partition(params.tma.q, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ),
                                    group_modes<0, 2>(gQ));
  auto [tKgK, tKsK] = tma_partition(params.tma.k, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sK),
                                    group_modes<0, 2>(gK));
  auto [tVgV, tVsV] = tma_partition(params.tma.v, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sV),
                                    group_modes<0, 2>(gV));

  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  Barrier::arrive_and_expect_tx(&smem.q_full, Traits::kQBytes);
  copy(params.tma.q.with(smem.q_full), tQgQ(_, work.q_block), tQsQ);

  CUTE_NO_UNROLL
  for (int t = 0; t < work.tile_count; ++t) {
    const int kv_block = Config::tile_kv(work.tile_begin + t);
    const int stage = t % kStages;
    const uint32_t empty_phase = ((t / kStages) & 1) ^ 1;  // a fresh barrier passes parity 1
    wait(&smem.k_empty[stage], empty_phase);
    Barrier::arrive_and_expect_tx(&smem.k_full[stage], Traits::kKBytes);
    copy(params.tma.k.with(smem.k_full[stage]), tKgK(_, kv_block), tKsK(_, stage));
    wait(&smem.v_empty[stage], empty_phase);
    Barrier::arrive_and_expect_tx(&smem.v_full[stage], Traits::kVBytes);
    copy(params.tma.v.with(smem.v_full[stage]), tVgV(_, kv_block), tVsV(_, stage));
  }
  // Drain the ring: the MMA thread's last tcgen05.commit to each stage's empty barriers has
  // arrived before the CTA exits (nobody else waits for them; shared memory must outlive them).
  CUTE_NO_UNROLL
  for (int t = cute::max(work.tile_count - kStages, 0); t < work.tile_count; ++t) {
    wait(&smem.k_empty[t % kStages], (t / kStages) & 1);
    wait(&smem.v_empty[t % kStages], (t / kStages) & 1);
  }
}

}  // namespace sm100a
}  // namespace kgen
