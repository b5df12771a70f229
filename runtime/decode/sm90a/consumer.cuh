// The decode kernel's consumer warpgroup: its 64 q tile rows against the kv blocks of its
// split, the forward's products and online softmax (sm90a/forward/) with the decode mask
// (decode/cuda/mask.cuh) on the blocks it touches. The block holding kv_len has value rows at
// or past it, which may hold anything, NaN included (0 * NaN is NaN in P V): they are zeroed in
// shared memory before the product. Each tile: S = Q K^T of tile t runs beside O += P V of
// tile t - 1, as in the forward's mainloop.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/mbarrier.cuh"
#include "cuda/named_barriers.cuh"
#include "cuda/ring.cuh"
#include "cuda/score_tile.cuh"
#include "decode/cuda/mask.cuh"
#include "decode/sm90a/epilogue.cuh"
#include "decode/sm90a/q_tile.cuh"
#include "decode/sm90a/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"
#include "sm90a/forward/online_softmax.cuh"
#include "sm90a/forward/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void consume_decode(Params const& params,
                                typename ForwardTraits<Config>::SharedStorage& smem,
                                DecodeWork const& work, int warp_group) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Mma = ForwardMma<Config>;
  using Element = typename Config::Element;
  using ScoreMod = typename Config::ScoreMod;
  using Ring = cuda::RingPosition<Config::kStages>;
  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  using Tile = cuda::ScoreTile<typename Mma::SView, cuda::TileRows::kQueries, 64>;
  constexpr int kBlockKv = Config::kBlockKv;
  constexpr int kHeadDimV = Config::kHeadDimV;
  const int thread = int(threadIdx.x) % 128;
  const int lane = thread % 32;
  const typename Mma::SView view(thread, 0);

  load_q_tile<Config>(params, smem, work, thread, warp_group);

  typename Mma::QK mma_qk;
  typename Mma::PV mma_pv;
  ThrMMA thr_qk = mma_qk.get_thread_slice(thread);
  ThrMMA thr_pv = mma_pv.get_thread_slice(thread);
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQTile{});
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});
  Tensor tSrQ = thr_qk.make_fragment_A(thr_qk.partition_A(sQ));
  Tensor tSrK = thr_qk.make_fragment_B(thr_qk.partition_B(sK));
  Tensor tOrV = thr_pv.make_fragment_B(thr_pv.partition_B(sV));
  Tensor acc_s = partition_fragment_C(mma_qk, Shape<_64, Int<kBlockKv>>{});
  Tensor acc_o = partition_fragment_C(mma_pv, Shape<_64, Int<kHeadDimV>>{});
  Tensor frag_p = make_tensor<Element>(typename Mma::LayoutP{});
  clear(acc_o);

  OnlineSoftmax<Config> softmax;
  const cuda::DecodeMask<Config> mask{work.blocks.kv_len};

  auto softmax_tile = [&](int kv_block, float (&correction)[Mma::SView::kRows]) {
    if constexpr (ScoreMod::kModifies) ScoreMod::apply(acc_s);  // before the mask: it stays -inf
    if (mask.masks(kv_block))
      mask.apply(acc_s, Tile{view, work.row_origin, kv_block * kBlockKv, 0});
    softmax.update(acc_s, correction);
  };
  auto probabilities_to_p = [&]() { cuda::convert_fragment<Element>(acc_s, frag_p); };
  auto release = [&](uint64_t* empty_barrier) { cuda::arrive_per_warp(empty_barrier, lane); };
  // Waits for the V stage of the work's last tile; when its block holds kv_len (only the last
  // block of the last split can), zeroes its value rows at or past it (no wgmma is in flight
  // here: none reads them before the barrier).
  auto wait_last_values = [&](int t, Ring at) {
    Barrier::wait(&smem.v_full[at.stage], at.phase);
    const int valid = work.blocks.kv_len - (work.blocks.begin + t) * kBlockKv;
    if (valid < kBlockKv) {
      Tensor stage = sV(_, _, at.stage);  // (head_dim_v, block_kv)
      for (int e = thread; e < kHeadDimV * (kBlockKv - valid); e += 128)
        stage(e % kHeadDimV, valid + e / kHeadDimV) = Element(0.f);
      cutlass::arch::fence_view_async_shared();
      cuda::sync_warpgroup(warp_group);
    }
  };

  const int count = work.tile_count();
  if (count > 0) {
    // Tile 0: S = Q K^T alone (peeled, as the forward's).
    const Ring first = Ring::at(0);
    Barrier::wait(&smem.k_full[first.stage], first.phase);
    warpgroup_fence_operand(acc_s);
    warpgroup_arrive();
    wgmma_tile(mma_qk, tSrQ, tSrK(_, _, _, first.stage), acc_s, true);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_s);
    release(&smem.k_empty[first.stage]);
    float correction[Mma::SView::kRows];
    softmax_tile(work.blocks.begin, correction);  // O is still 0: no rescale
    probabilities_to_p();

    CUTE_NO_UNROLL
    for (int t = 1; t < count; ++t) {
      const Ring current = Ring::at(t);
      const Ring previous = Ring::at(t - 1);
      Barrier::wait(&smem.v_full[previous.stage], previous.phase);  // a block below kv_len

      // S = Q K^T of tile t and O += P V of tile t - 1, both in flight.
      Barrier::wait(&smem.k_full[current.stage], current.phase);
      warpgroup_fence_operand(acc_s);
      warpgroup_arrive();
      wgmma_tile(mma_qk, tSrQ, tSrK(_, _, _, current.stage), acc_s, true);
      warpgroup_commit_batch();
      warpgroup_fence_operand(acc_o);
      warpgroup_fence_operand(frag_p);
      warpgroup_arrive();
      wgmma_tile(mma_pv, frag_p, tOrV(_, _, _, previous.stage), acc_o, false);
      warpgroup_commit_batch();
      warpgroup_wait<1>();  // S is ready; P V may still run
      warpgroup_fence_operand(acc_s);
      release(&smem.k_empty[current.stage]);

      softmax_tile(work.blocks.begin + t, correction);

      warpgroup_wait<0>();  // P V of tile t - 1 is done: its V stage and P are free
      warpgroup_fence_operand(acc_o);
      release(&smem.v_empty[previous.stage]);
      scale_rows(acc_o, correction);
      probabilities_to_p();
    }

    // O += P V of the last tile.
    const Ring last = Ring::at(count - 1);
    wait_last_values(count - 1, last);
    warpgroup_fence_operand(acc_o);
    warpgroup_fence_operand(frag_p);
    warpgroup_arrive();
    wgmma_tile(mma_pv, frag_p, tOrV(_, _, _, last.stage), acc_o, false);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_o);
    release(&smem.v_empty[last.stage]);
  }

  store_decode_rows<Config>(params, softmax, acc_o, work, thread);
}

}  // namespace sm90a
}  // namespace kgen
