// The backward's producer: one elected thread of the producer warpgroup issues every TMA load
// of the CTA, K and V of its kv block once, then Q and dO of every step into the
// mbarrier-guarded ring.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/ring.cuh"
#include "sm90a/backward/kernel_traits.cuh"
#include "sm90a/backward/work.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void produce_backward(Params const& params,
                                  typename BackwardTraits<Config>::SharedStorage& smem,
                                  BackwardCtaWork const& work) {
  using namespace cute;
  using Traits = BackwardTraits<Config>;
  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  constexpr int kStages = Config::kStages;
  if (work.steps == 0) return;  // the consumers write zeros, and read nothing

  // (64, features, 64-row tile) of one head: rows are q positions for Q and dO, kv positions
  // for K and V; features head_dim for Q and K, head_dim_v for V and dO.
  auto tiles_of = [&](auto const& tma, auto features, int rows, int heads, int head) {
    Tensor m = tma.get_tma_tensor(make_shape(rows, int(features), heads, int(Config::kBatch)));
    return local_tile(m(_, _, head, work.batch), Shape<_64, decltype(features)>{},
                      make_coord(_, _0{}));
  };
  constexpr auto kD = Int<Config::kHeadDim>{};
  constexpr auto kDv = Int<Config::kHeadDimV>{};
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutKStack{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutVStack{});
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQ{});
  Tensor sDo = make_tensor(make_smem_ptr(smem.dout.data()), typename Traits::SmemLayoutDo{});

  {
    Tensor gK = tiles_of(params.tma.k, kD, Config::kKvLen, Config::kKvHeads, work.kv_head);
    Tensor gV = tiles_of(params.tma.v, kDv, Config::kKvLen, Config::kKvHeads, work.kv_head);
    auto [tKgK, tKsK] = tma_partition(params.tma.k, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sK),
                                      group_modes<0, 2>(gK));
    auto [tVgV, tVsV] = tma_partition(params.tma.v, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sV),
                                      group_modes<0, 2>(gV));
    Barrier::arrive_and_expect_tx(&smem.kv_full, Traits::kKvBytes);
    CUTE_UNROLL
    for (int slot = 0; slot < Config::kKvSlots; ++slot) {
      const int tile = work.kv_block * Config::kKvSlots + slot;
      copy(params.tma.k.with(smem.kv_full), tKgK(_, tile), tKsK(_, slot));
      copy(params.tma.v.with(smem.kv_full), tVgV(_, tile), tVsV(_, slot));
    }
  }

  for_each_step<Config>(work, [&](BackwardStep const& step, int t) {
    const cuda::RingPosition<kStages> at = cuda::RingPosition<kStages>::at(t);
    const int stage = at.stage;
    const uint32_t empty_phase = at.empty_phase();
    Tensor gQ = tiles_of(params.tma.q, kD, Config::kQLen, Config::kQHeads, step.head);
    Tensor gDo = tiles_of(params.tma.dout, kDv, Config::kQLen, Config::kQHeads, step.head);
    auto [tQgQ, tQsQ] = tma_partition(params.tma.q, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ),
                                      group_modes<0, 2>(gQ));
    auto [tDogDo, tDosDo] = tma_partition(params.tma.dout, Int<0>{}, Layout<_1>{},
                                          group_modes<0, 2>(sDo), group_modes<0, 2>(gDo));
    cutlass::arch::ClusterBarrier::wait(&smem.q_empty[stage], empty_phase);
    Barrier::arrive_and_expect_tx(&smem.q_full[stage], Traits::kQBytes);
    copy(params.tma.q.with(smem.q_full[stage]), tQgQ(_, step.q_block), tQsQ(_, stage));
    cutlass::arch::ClusterBarrier::wait(&smem.dout_empty[stage], empty_phase);
    Barrier::arrive_and_expect_tx(&smem.dout_full[stage], Traits::kDoBytes);
    copy(params.tma.dout.with(smem.dout_full[stage]), tDogDo(_, step.q_block), tDosDo(_, stage));
  });
}

}  // namespace sm90a
}  // namespace kgen
