// The producer: one elected thread of the producer warpgroup issues every TMA load of the
// CTA, Q once and then K and V of every listed kv tile into the mbarrier-guarded ring
// (cuda/kv_ring.cuh).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/kv_ring.cuh"
#include "cuda/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void produce(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem,
                         cuda::CtaWork const& work) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  constexpr int kHeadDim = Config::kHeadDim;
  if (work.tile_count == 0) return;  // nothing to load: the consumers write the empty rows

  Tensor mQ = params.tma.q.get_tma_tensor(
      make_shape(Config::kQLen, kHeadDim, Config::kQHeads, Config::kBatch));
  // (64, head_dim, q tile of 64 rows)
  Tensor gQ =
      local_tile(mQ(_, _, work.head, work.batch), Shape<_64, Int<kHeadDim>>{}, make_coord(_, _0{}));
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQ{});
  auto [tQgQ, tQsQ] = tma_partition(params.tma.q, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ),
                                    group_modes<0, 2>(gQ));

  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  Barrier::arrive_and_expect_tx(&smem.q_full, Traits::kQBytes);
  CUTE_UNROLL
  for (int consumer = 0; consumer < Config::kConsumers; ++consumer)
    copy(params.tma.q.with(smem.q_full), tQgQ(_, work.q_block * Config::kConsumers + consumer),
         tQsQ(_, consumer));
  cuda::load_kv_ring<Config, Traits>(params, smem, work, 0, 0, work.tile_count);
}

}  // namespace sm90a
}  // namespace kgen
