// The load warp: one elected thread issues every TMA load of the CTA, per live work item K
// and V of every listed kv tile into the mbarrier-guarded ring (cuda/kv_ring.cuh), which the
// MMA thread's tcgen05.commit frees, and Q once, after the ring's first stages and after the
// epilogue of the previous live item released Q's shared memory (it held that item's O).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/kv_ring.cuh"
#include "cuda/ring.cuh"
#include "cuda/work.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/schedule.cuh"
#include "sm100a/forward/sync.cuh"

namespace kgen {
namespace sm100a {

template <class Config, class Params>
CUTE_DEVICE void load(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kStages = Config::kStages;
  Tensor mQ = params.tma.q.get_tma_tensor(
      make_shape(Config::kQLen, kHeadDim, Config::kQHeads, Config::kBatch));
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQTile{});

  const ItemCounts end = for_each_work_item<Config>(params, [&](cuda::CtaWork const& work,
                                                                ItemCounts const& at) {
    if (work.tile_count == 0) return;  // nothing to load: the correction warps write zeros
    // (128, head_dim, q block)
    Tensor gQ = local_tile(mQ(_, _, work.head, work.batch), Shape<_128, Int<kHeadDim>>{},
                           make_coord(_, _0{}));
    auto [tQgQ, tQsQ] = tma_partition(params.tma.q, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ),
                                      group_modes<0, 2>(gQ));
    // K and V of the first tiles need no Q: they go first, while the last item's epilogue
    // still holds Q's memory (their ring stages are freed by that item's products alone).
    const int early = cute::min(work.tile_count, kStages);
    cuda::load_kv_ring<Config, Traits>(params, smem, work, at.tiles, 0, early);
    // Q's memory is free once the last live item's epilogue stored its O.
    if (at.live > 0) wait(&smem.q_empty, cuda::RingPosition<1>::at(at.live - 1).phase);
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&smem.q_full, Traits::kQBytes);
    copy(params.tma.q.with(smem.q_full), tQgQ(_, work.q_block), tQsQ);
    cuda::load_kv_ring<Config, Traits>(params, smem, work, at.tiles, early, work.tile_count);
  });

  // Drain the ring: the MMA thread's last tcgen05.commit to each stage's empty barriers has
  // arrived before the CTA exits (nobody else waits for them; shared memory must outlive them).
  CUTE_NO_UNROLL
  for (int t = cute::max(end.tiles - kStages, 0); t < end.tiles; ++t) {
    const cuda::RingPosition<kStages> ring = cuda::RingPosition<kStages>::at(t);
    wait(&smem.k_empty[ring.stage], ring.phase);
    wait(&smem.v_empty[ring.stage], ring.phase);
  }
}

}  // namespace sm100a
}  // namespace kgen
