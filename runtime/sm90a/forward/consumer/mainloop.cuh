// A consumer warpgroup: its 64 q rows against every kv tile of the CTA's list. S = Q K^T (both
// operands in shared memory), the score modifier, the masks and the online softmax, then
// O += P V with P in registers; the softmax of tile t overlaps the P V product of tile t - 1.
//
// What ptxas keeps of that overlap depends on the loop's shape (docs/sm90a-kernel.md, "What
// moves ptxas's wait"): a branch in the loop makes it wait for P V(t - 1) at the branch's join,
// before any exponential, so the partial tiles (listed first) and the full ones run in loops
// of their own, the mask compiled into the first only -- and with document skips a third loop
// takes the full tiles inside one document, with no id comparison (cuda/document_tiles.cuh);
// and O is rescaled before P V(t - 1) is issued (FlashAttention-3's order), so that after the
// wait only P is written.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/masks.cuh"
#include "cuda/mbarrier.cuh"
#include "cuda/ring.cuh"
#include "cuda/score_tile.cuh"
#include "cuda/work.cuh"
#include "sm90a/forward/consumer/issue_turns.cuh"
#include "sm90a/forward/epilogue.cuh"
#include "sm90a/forward/kernel_traits.cuh"
#include "sm90a/forward/online_softmax.cuh"
#include "sm90a/forward/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void consume(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem,
                         int consumer, cuda::CtaWork const& work) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Mma = ForwardMma<Config>;
  using Element = typename Config::Element;
  using Mask = typename Config::Mask;
  using ScoreMod = typename Config::ScoreMod;
  using Ring = cuda::RingPosition<Config::kStages>;
  using Turns = IssueTurns<Config>;
  // S as this thread's registers see it: rows (queries) of the CTA's q block, columns (keys)
  // of the kv tile (sm90a/wgmma.cuh).
  using Tile = cuda::ScoreTile<typename Mma::SView, cuda::TileRows::kQueries, Config::kBlockQ>;
  using Segments = typename Config::SegmentMask::template Rows<Tile>;
  constexpr int kBlockKv = Config::kBlockKv;
  constexpr int kHeadDimV = Config::kHeadDimV;
  constexpr bool kSkipsDocuments = Config::SegmentMask::kSkipsDocuments;
  const int thread = int(threadIdx.x) % 128;
  const int lane = thread % 32;
  const typename Mma::SView view(thread, consumer * 64);
  const int q_origin = work.q_block * Config::kBlockQ;

  typename Mma::QK mma_qk;
  typename Mma::PV mma_pv;
  ThrMMA thr_qk = mma_qk.get_thread_slice(thread);
  ThrMMA thr_pv = mma_pv.get_thread_slice(thread);
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data() + consumer * Traits::kQTileElements),
                          typename Traits::SmemLayoutQTile{});
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});
  Tensor tSrQ = thr_qk.make_fragment_A(thr_qk.partition_A(sQ));  // (mma, 1, head_dim / 16)
  Tensor tSrK = thr_qk.make_fragment_B(thr_qk.partition_B(sK));  // (mma, 1, head_dim / 16, stage)
  Tensor tOrV = thr_pv.make_fragment_B(thr_pv.partition_B(sV));  // (mma, 1, block_kv / 16, stage)
  Tensor acc_s = partition_fragment_C(mma_qk, Shape<_64, Int<kBlockKv>>{});
  Tensor acc_o = partition_fragment_C(mma_pv, Shape<_64, Int<kHeadDimV>>{});
  Tensor frag_p = make_tensor<Element>(typename Mma::LayoutP{});
  static_assert(size(acc_s) == kBlockKv / 2 && size(frag_p) == size(acc_s), "S and P fragments");
  static_assert(size(acc_o) == kHeadDimV / 2, "O fragment");
  clear(acc_o);

  OnlineSoftmax<Config> softmax;
  const Segments segments(params, work.batch, view, q_origin);

  // Scores of tile t in acc_s -> the score domain, the masks (the plan's on a partial tile, the
  // ids' on a tile that compares them: `kind` is a TileKind), the online softmax; acc_s becomes
  // the tile's probabilities and `correction` O's rescale factors.
  float correction[Mma::SView::kRows];
  auto softmax_tile = [&](auto kind, int t) {
    using Kind = decltype(kind);
    if constexpr (ScoreMod::kModifies) ScoreMod::apply(acc_s);  // before the masks: they stay -inf
    const int entry = cuda::tile_entry<Config>(work, t);
    const Tile tile{view, q_origin, Config::tile_kv(entry) * kBlockKv, entry};
    // Each outer test depends on `kind`, so a call discards what its kind does not use; the
    // inner ones are the kernel's (a policy without apply() is discarded with the kernel).
    if constexpr (Kind::kPartial) {
      if constexpr (Mask::kMasksPartialTiles) Mask::apply(acc_s, tile);
    }
    if constexpr (Kind::kCompares) {
      if constexpr (Segments::kMasks) segments.apply(acc_s, tile);
    }
    softmax.update(acc_s, correction);
  };
  // P = the probabilities in acc_s, as the A operand of the next O += P V.
  auto probabilities_to_p = [&]() { cuda::convert_fragment<Element>(acc_s, frag_p); };
  auto release = [&](uint64_t* empty_barrier) { cuda::arrive_per_warp(empty_barrier, lane); };

  if (work.tile_count > 0) {
    using Barrier = cutlass::arch::ClusterTransactionBarrier;
    Barrier::wait(&smem.q_full, 0);  // Q is loaded once
    Turns::start(consumer);

    // Tile 0: S = Q K^T alone. (Peeled, so that no branch can leave a wgmma in flight while
    // its operands are redefined; ptxas would serialize every wgmma otherwise.)
    const Ring first = Ring::at(0);
    Barrier::wait(&smem.k_full[first.stage], first.phase);
    Turns::wait_turn(consumer);
    warpgroup_fence_operand(acc_s);
    warpgroup_arrive();
    wgmma_tile(mma_qk, tSrQ, tSrK(_, _, _, first.stage), acc_s, true);
    warpgroup_commit_batch();
    Turns::pass_turn(consumer);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_s);
    release(&smem.k_empty[first.stage]);
    // O is still 0: no rescale.
    if (work.partial_count > 0) {
      softmax_tile(cuda::PartialTile{}, 0);
    } else if (!kSkipsDocuments || work.compare_end > 0) {
      softmax_tile(cuda::FullTile{}, 0);
    } else if constexpr (kSkipsDocuments) {
      softmax_tile(cuda::OneDocumentTile{}, 0);
    }
    probabilities_to_p();

    // Tile t >= 1: S = Q K^T of tile t and O += P V of tile t - 1 in flight, the softmax of t
    // between the two waits.
    auto step = [&](auto kind, int t) {
      const Ring current = Ring::at(t);
      const Ring previous = Ring::at(t - 1);
      Barrier::wait(&smem.k_full[current.stage], current.phase);
      Turns::wait_turn(consumer);
      warpgroup_fence_operand(acc_s);
      warpgroup_arrive();
      wgmma_tile(mma_qk, tSrQ, tSrK(_, _, _, current.stage), acc_s, true);
      warpgroup_commit_batch();
      scale_rows(acc_o, correction);  // to tile t - 1's max, before its P V adds to O
      Barrier::wait(&smem.v_full[previous.stage], previous.phase);
      warpgroup_fence_operand(acc_o);
      warpgroup_fence_operand(frag_p);
      warpgroup_arrive();
      wgmma_tile(mma_pv, frag_p, tOrV(_, _, _, previous.stage), acc_o, false);
      warpgroup_commit_batch();
      Turns::pass_turn(consumer);
      warpgroup_wait<1>();  // S is ready; P V may still run
      warpgroup_fence_operand(acc_s);
      release(&smem.k_empty[current.stage]);

      softmax_tile(kind, t);

      warpgroup_wait<0>();  // P V of tile t - 1 is done: its V stage and P are free
      warpgroup_fence_operand(acc_o);
      release(&smem.v_empty[previous.stage]);
      probabilities_to_p();
    };
    int t = 1;
    CUTE_NO_UNROLL
    for (; t < work.partial_count; ++t) step(cuda::PartialTile{}, t);
    CUTE_NO_UNROLL
    for (; t < work.compare_end; ++t) step(cuda::FullTile{}, t);
    if constexpr (kSkipsDocuments) {
      CUTE_NO_UNROLL
      for (; t < work.tile_count; ++t) step(cuda::OneDocumentTile{}, t);
    }

    // O += P V of the last tile.
    const Ring last = Ring::at(work.tile_count - 1);
    scale_rows(acc_o, correction);
    Barrier::wait(&smem.v_full[last.stage], last.phase);
    Turns::wait_turn(consumer);
    warpgroup_fence_operand(acc_o);
    warpgroup_fence_operand(frag_p);
    warpgroup_arrive();
    wgmma_tile(mma_pv, frag_p, tOrV(_, _, _, last.stage), acc_o, false);
    warpgroup_commit_batch();
    Turns::pass_turn(consumer);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_o);
    release(&smem.v_empty[last.stage]);
  }

  normalize_rows(params, softmax, acc_o, work, view, lane);
  store_o<Config>(params, smem, mma_pv, acc_o, work, consumer, thread);
}

}  // namespace sm90a
}  // namespace kgen
