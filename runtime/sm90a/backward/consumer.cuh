// A consumer warpgroup of the backward: its kv slot's 64 rows against every step's 64 q rows
// (docs/sm90a-backward.md, "One step"), for its window of dK's, dV's and dQ's columns. Per
// step: S^T = K Q^T and dP^T = V dO^T; the score modifier and the masks; P^T = exp2(x
// kExp2Scale - lse_log2) and dS^T = P^T (dP^T - delta) (times the softcap's derivative);
// dV += P^T dO and dK += dS^T Q with P^T, dS^T in registers; dS^T to shared memory and
// dQ += dS K, added to the f32 workspace by atomics. The epilogue writes dK (times the
// scale) and dV through shared memory with TMA.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/exp2.cuh"
#include "cuda/mbarrier.cuh"
#include "cuda/named_barriers.cuh"
#include "cuda/ring.cuh"
#include "cuda/score_tile.cuh"
#include "sm90a/backward/kernel_traits.cuh"
#include "sm90a/backward/wgmma.cuh"
#include "sm90a/backward/work.cuh"
#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Columns, class Params>
CUTE_DEVICE void consume_backward(Params const& params,
                                  typename BackwardTraits<Config>::SharedStorage& smem, int slot,
                                  Columns const& columns, BackwardCtaWork const& work) {
  using namespace cute;
  using Traits = BackwardTraits<Config>;
  using Mma = BackwardMma<Config>;
  using Element = typename Config::Element;
  using Mask = typename Config::Mask;
  using ScoreMod = typename Config::ScoreMod;
  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  using Ring = cuda::RingPosition<Config::kStages>;
  // S^T as this thread's registers see it: rows (keys) of the CTA's kv block, columns
  // (queries) of the step's q block (sm90a/wgmma.cuh).
  using Tile = cuda::ScoreTile<typename Mma::SView, cuda::TileRows::kKeys, Config::kBlockKv>;
  using Segments = typename Config::SegmentMask::template Rows<Tile>;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kStages = Config::kStages;
  const int thread = int(threadIdx.x) % 128;
  const int lane = thread % 32;
  const int consumer = slot * Config::kDimParts + columns.part;
  const int warp_group = 1 + consumer;  // the producer is warpgroup 0
  const typename Mma::SView view(thread, slot * 64);
  const int kv_origin = work.kv_block * Config::kBlockKv;
  // In the dQ fragment the same registers are q rows (tile_row, within the q block) and
  // head_dim columns (col_base + c + 8 n).
  const int tile_row = Mma::SView::row_of_thread(thread);
  const int col_base = view.column_base;
  const BackwardWorkspace<Config> workspace(params.workspace);

  typename Mma::SdP mma_sdp;
  typename Mma::Dk mma_dk;
  typename Mma::Dv mma_dv;
  typename Mma::Dq mma_dq;
  ThrMMA thr_sdp = mma_sdp.get_thread_slice(thread);
  ThrMMA thr_dk = mma_dk.get_thread_slice(thread);
  ThrMMA thr_dv = mma_dv.get_thread_slice(thread);
  ThrMMA thr_dq = mma_dq.get_thread_slice(thread);
  Element* k_tile = smem.k.data() + slot * Traits::kKElements;
  Element* v_tile = smem.v.data() + slot * Traits::kVElements;
  Element* ds_tile = smem.ds.data() + consumer * Traits::kDsElements;
  Tensor sK = make_tensor(make_smem_ptr(k_tile), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(v_tile), typename Traits::SmemLayoutV{});
  Tensor sKt = make_tensor(make_smem_ptr(k_tile), typename Traits::SmemLayoutKt{});
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQ{});
  Tensor sDo = make_tensor(make_smem_ptr(smem.dout.data()), typename Traits::SmemLayoutDo{});
  Tensor sQt = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQt{});
  Tensor sDot = make_tensor(make_smem_ptr(smem.dout.data()), typename Traits::SmemLayoutDot{});
  // This part's windows: of dK (and dQ) in K and Q, of dV in V and dO.
  using DkWidth = Int<Columns::kDkWidth>;
  using DvWidth = Int<Columns::kDvWidth>;
  Tensor sQtPart =
      column_window(sQt, Shape<DkWidth, _64, Int<kStages>>{}, make_coord(columns.dk_first, 0, 0));
  Tensor sDotPart =
      column_window(sDot, Shape<DvWidth, _64, Int<kStages>>{}, make_coord(columns.dv_first, 0, 0));
  Tensor sDs = make_tensor(make_smem_ptr(ds_tile), typename Traits::SmemLayoutDs{});
  Tensor sDsT = make_tensor(make_smem_ptr(ds_tile), typename Traits::SmemLayoutDsT{});

  Tensor tSrK = thr_sdp.make_fragment_A(thr_sdp.partition_A(sK));  // (mma, 1, d / 16)
  Tensor tSrQ = thr_sdp.make_fragment_B(thr_sdp.partition_B(sQ));  // (mma, 1, d / 16, stage)
  Tensor tDPrV = thr_sdp.make_fragment_A(thr_sdp.partition_A(sV));
  Tensor tDPrDo = thr_sdp.make_fragment_B(thr_sdp.partition_B(sDo));
  Tensor tDVrDo =
      thr_dv.make_fragment_B(thr_dv.partition_B(sDotPart));  // (mma, cols / N, 4, stage)
  Tensor tDKrQ = thr_dk.make_fragment_B(thr_dk.partition_B(sQtPart));
  Tensor tDQrDs = thr_dq.make_fragment_A(thr_dq.partition_A(sDsT));  // (mma, 1, 4)

  Tensor acc_s = partition_fragment_C(mma_sdp, Shape<_64, _64>{});
  Tensor acc_dp = partition_fragment_C(mma_sdp, Shape<_64, _64>{});
  Tensor acc_dk = partition_fragment_C(mma_dk, Shape<_64, DkWidth>{});
  Tensor acc_dv = partition_fragment_C(mma_dv, Shape<_64, DvWidth>{});
  Tensor acc_dq = partition_fragment_C(mma_dq, Shape<_64, _64>{});
  Tensor frag_p = make_tensor<Element>(typename Mma::LayoutP{});
  Tensor frag_ds = make_tensor<Element>(typename Mma::LayoutP{});
  Tensor frag_ds_c = make_tensor(frag_ds.data(), acc_dp.layout());  // the same registers as C
  static_assert(size(acc_s) == 32 && size(frag_p) == 32, "S^T and P^T fragments");
  static_assert(size(acc_dk) == Columns::kDkWidth / 2 && size(acc_dv) == Columns::kDvWidth / 2,
                "dK and dV fragments");
  clear(acc_dk);
  clear(acc_dv);

  const Segments segments(params, work.batch, view, kv_origin);
  auto release = [&](uint64_t* empty_barrier) { cuda::arrive_per_warp(empty_barrier, lane); };

  if (work.steps > 0) Barrier::wait(&smem.kv_full, 0);
  // Inlined: a call would cut the wgmma pipeline (ptxas serializes wgmma across calls).
  for_each_step<Config>(work, [&](BackwardStep const& step, int t) CUTLASS_LAMBDA_FUNC_INLINE {
    const Ring at = Ring::at(t);
    const int stage = at.stage;

    // S^T = K Q^T and dP^T = V dO^T.
    Barrier::wait(&smem.q_full[stage], at.phase);
    Barrier::wait(&smem.dout_full[stage], at.phase);
    warpgroup_fence_operand(acc_s);
    warpgroup_fence_operand(acc_dp);
    warpgroup_arrive();
    wgmma_tile(mma_sdp, tSrK, tSrQ(_, _, _, stage), acc_s, true);
    wgmma_tile(mma_sdp, tDPrV, tDPrDo(_, _, _, stage), acc_dp, true);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_s);
    warpgroup_fence_operand(acc_dp);

    // The score domain and the masks, then P^T and dS^T from the forward's statistics.
    const Tile tile{view, kv_origin, step.q_block * Config::kBlockQ, step.entry};
    const int col_first = tile.column_origin + col_base;
    if constexpr (ScoreMod::kModifies) ScoreMod::apply(acc_s);  // before the masks: they stay -inf
    if constexpr (Mask::kMasksPartialTiles) {
      if (step.partial) Mask::apply(acc_s, tile);
    }
    if constexpr (Segments::kMasks) segments.apply(acc_s, tile);
    const int64_t row_of_head =
        (int64_t(work.batch) * Config::kQHeads + step.head) * Config::kQPadded + col_first;
    const float2* lse_log2 = reinterpret_cast<const float2*>(workspace.lse_log2 + row_of_head);
    const float2* delta = reinterpret_cast<const float2*>(workspace.delta + row_of_head);
    CUTE_UNROLL
    for (int n = 0; n < Config::kBlockQ / 8; ++n) {
      const float2 l = lse_log2[4 * n];  // columns col_first + 8 n and + 1
      const float2 d = delta[4 * n];
      CUTE_UNROLL
      for (int r = 0; r < 2; ++r) {
        CUTE_UNROLL
        for (int c = 0; c < 2; ++c) {
          const int e = c + 2 * r + 4 * n;
          const float x = acc_s(e);
          const float p = cuda::fast_exp2(x * Config::kExp2Scale - (c == 0 ? l.x : l.y));
          acc_s(e) = p;
          acc_dp(e) = p * (acc_dp(e) - (c == 0 ? d.x : d.y)) * ScoreMod::derivative(x);
        }
      }
    }
    cuda::convert_fragment<Element>(acc_s, frag_p);
    cuda::convert_fragment<Element>(acc_dp, frag_ds);

    // dV += P^T dO and dK += dS^T Q.
    warpgroup_fence_operand(acc_dv);
    warpgroup_fence_operand(acc_dk);
    warpgroup_fence_operand(frag_p);
    warpgroup_fence_operand(frag_ds);
    warpgroup_arrive();
    wgmma_tile(mma_dv, frag_p, tDVrDo(_, _, _, stage), acc_dv, false);
    wgmma_tile(mma_dk, frag_ds, tDKrQ(_, _, _, stage), acc_dk, false);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_dv);
    warpgroup_fence_operand(acc_dk);
    // dS^T to shared memory for dQ, only now: an in-flight wgmma's register operands (frag_ds)
    // must not be read.
    store_fragment<Element>(mma_sdp, frag_ds_c, sDs, thread);
    cutlass::arch::fence_view_async_shared();  // generic-proxy writes, read next by wgmma
    cuda::sync_warpgroup(warp_group);          // every warp's dS^T rows are written
    release(&smem.q_empty[stage]);
    release(&smem.dout_empty[stage]);

    // dQ += dS K for the columns this part owns, 64 at a time, into the workspace.
    float* dq_rows = workspace.dq_accum +
                     ((int64_t(work.batch) * Config::kQHeads + step.head) * Config::kQPadded +
                      step.q_block * Config::kBlockQ + tile_row) *
                         kHeadDim +
                     col_base;
    CUTE_UNROLL
    for (int c = 0; c < Columns::kDqChunks; ++c) {
      if (c < columns.dq_owned_first) continue;
      const int chunk = columns.dk_first / 64 + c;
      Tensor tDQrK = thr_dq.make_fragment_B(
          thr_dq.partition_B(local_tile(sKt, Shape<_64, _64>{}, make_coord(chunk, _0{}))));
      warpgroup_fence_operand(acc_dq);
      warpgroup_arrive();
      wgmma_tile(mma_dq, tDQrDs, tDQrK, acc_dq, true);
      warpgroup_commit_batch();
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_dq);
      CUTE_UNROLL
      for (int n = 0; n < 8; ++n) {
        CUTE_UNROLL
        for (int r = 0; r < 2; ++r) {
          float2* target =
              reinterpret_cast<float2*>(dq_rows + 8 * r * kHeadDim + chunk * 64 + 8 * n);
          atomicAdd(target, make_float2(acc_dq(2 * r + 4 * n), acc_dq(1 + 2 * r + 4 * n)));
        }
      }
    }
    // Each warp's wait covers only its own slice of the dQ product, which reads every row of
    // dS^T and K: no warp may write the next step's dS^T (or, after the last step, dK over the
    // K tile) before all four are done reading.
    cuda::sync_warpgroup(warp_group);
  });

  // dK = scale * acc (dS is the gradient of the unscaled q.k) and dV, over the slot's own K
  // and V tiles, each part its window, then one TMA store each. After this consumer's last
  // closing barrier none of its wgmmas reads them; with two parts, the slot barrier waits
  // for the other part's too, and part 1 writes first: where the windows overlap, part 0's
  // values (the columns it owns) are the ones stored.
  CUTE_UNROLL
  for (int e = 0; e < size(acc_dk); ++e) acc_dk(e) *= Config::kScale;
  Tensor frag_dk = make_tensor_like<Element>(acc_dk);
  Tensor frag_dv = make_tensor_like<Element>(acc_dv);
  cuda::convert_fragment<Element>(acc_dk, frag_dk);
  cuda::convert_fragment<Element>(acc_dv, frag_dv);
  Tensor sKPart = column_window(sK, Shape<_64, DkWidth>{}, make_coord(0, columns.dk_first));
  Tensor sVPart = column_window(sV, Shape<_64, DvWidth>{}, make_coord(0, columns.dv_first));
  auto write_window = [&] {
    store_fragment<Element>(mma_dk, frag_dk, sKPart, thread);
    store_fragment<Element>(mma_dv, frag_dv, sVPart, thread);
    cutlass::arch::fence_view_async_shared();  // generic-proxy writes, read next by the TMA unit
  };
  if constexpr (Config::kDimParts == 1) {
    write_window();
    cuda::sync_warpgroup(warp_group);
  } else {
    constexpr int kSlotThreads = 128 * Config::kDimParts;
    cuda::sync_warpgroup_set(slot, kSlotThreads);  // K and V are read no more
    if (columns.part == 1) write_window();
    cuda::sync_warpgroup_set(slot, kSlotThreads);
    if (columns.part == 0) write_window();
    cuda::sync_warpgroup_set(slot, kSlotThreads);
  }
  if (columns.part == 0 && thread / 32 == 0 && cute::elect_one_sync()) {
    const int tile = work.kv_block * Config::kKvSlots + slot;
    auto store = [&](auto const& tma, auto const& s, auto features) {
      Tensor m = tma.get_tma_tensor(make_shape(int(Config::kKvLen), int(features),
                                               int(Config::kKvHeads), int(Config::kBatch)));
      Tensor g = local_tile(m(_, _, work.kv_head, work.batch), Shape<_64, decltype(features)>{},
                            make_coord(_, _0{}));
      auto [tg, ts] =
          tma_partition(tma, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(s), group_modes<0, 2>(g));
      copy(tma, ts, tg(_, tile));
    };
    store(params.tma.dk, sK, Int<kHeadDim>{});
    store(params.tma.dv, sV, Int<Config::kHeadDimV>{});
    tma_store_arrive();
    tma_store_wait<0>();  // the shared-memory source must outlive the store
  }
}

}  // namespace sm90a
}  // namespace kgen
