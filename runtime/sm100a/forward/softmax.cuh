// The softmax warpgroup: thread t owns q row t of the CTA's block. Per tile it loads its row
// of S from tensor memory, applies the score modifier and the masks, updates the running
// max, hands O's rescale factor to the correction warps, and writes P = exp2(kExp2Scale
// (x - max)) back over S as the A operand of O += P V. At the end: the row's lse and the
// factor out = O * out_scale (docs/sm100a-kernel.md, "Softmax and correction"), for each of
// the CTA's work items in turn (schedule.cuh).
//
// Conditional rescaling (as FlashAttention-4): the max the exponentials are taken against
// only moves when the row max rose by more than kRescaleThreshold in log2 units; otherwise
// P may exceed 1 (by at most 2^kRescaleThreshold, safe in 16 bits and in O's f32), O and the
// sum stay as they are, and the correction warps skip the tensor-memory round trip. The
// final normalization uses the same lagging max, so the result is exact either way.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/exp2.cuh"
#include "cuda/finish_row.cuh"
#include "cuda/ring.cuh"
#include "cuda/score_mods.cuh"
#include "cuda/score_tile.cuh"
#include "cuda/work.cuh"
#include "sm100a/forward/exp2_fma.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/schedule.cuh"
#include "sm100a/forward/sync.cuh"
#include "sm100a/forward/tmem.cuh"

namespace kgen {
namespace sm100a {

template <class Config, class Params>
CUTE_DEVICE void softmax(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem,
                         uint32_t tmem_base) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;
  using Mask = typename Config::Mask;
  using ScoreMod = typename Config::ScoreMod;
  // S and P alternate over two tensor-memory buffers (kTmemS0, kTmemS1), counted over the
  // CTA's tiles.
  using Buffer = cuda::RingPosition<2>;
  // S as this thread's registers see it: one row (a query) of the work item's q block, every
  // column (key) of the kv tile (tmem.cuh).
  using View = TmemRowView<Config::kBlockKv>;
  using Tile = cuda::ScoreTile<View, cuda::TileRows::kQueries, Config::kBlockQ>;
  using Segments = typename Config::SegmentMask::template Rows<Tile>;
  constexpr int kBlockKv = Config::kBlockKv;
  const int row = int(threadIdx.x) % 128;
  const View view{row};
  constexpr int kPChunk = 64;  // keys of P per tensor-memory store
  // One exponential in kFmaExp2Every on the FMA pipe, the others on MUFU (exp2_fma.cuh).
  constexpr int kFmaExp2Every = 4;
  static_assert(kBlockKv % kPChunk == 0, "P is stored 32 columns at a time");
  array<float, kBlockKv> s;
  Tensor scores = make_tensor(make_rmem_ptr(s.data()), make_layout(Int<kBlockKv>{}));

  for_each_work_item<Config>(params, [&](cuda::CtaWork const& work, ItemCounts const& at) {
    const int q_origin = work.q_block * Config::kBlockQ;
    // The row's running max, in the score domain x, and its sum of exp2(kExp2Scale (x -
    // row_max)) over the kept keys.
    float row_max = -INFINITY;
    float row_sum = 0.f;
    const Segments segments(params, work.batch, view, q_origin);

    CUTE_NO_UNROLL
    for (int t = 0; t < work.tile_count; ++t) {
      // S, P and the factors alternate over the CTA's tiles.
      const Buffer buffer = Buffer::at(at.tiles + t);
      const int slot = buffer.stage;
      const uint32_t s_column = slot == 0 ? Traits::kTmemS0 : Traits::kTmemS1;
      // Release/acquire, not the relaxed tensor-memory pattern: besides S, this hand-off orders
      // the correction's reads of row_scale[slot] (two tiles back) and of out_scale (the last
      // item) before this thread overwrites them. Their chain runs through the correction's
      // p_full (or q_empty) arrival, the MMA thread's acquiring wait on it and the commit that
      // arrives here after the products that thread issued since (sync.cuh).
      wait(&smem.s_full[slot], buffer.phase);
      load_row<kBlockKv>(tmem_s<Config>(tmem_base + s_column), s);
      cutlass::arch::fence_view_async_tmem_load();

      // Before the masks: they stay -inf.
      if constexpr (ScoreMod::kModifies) ScoreMod::apply(scores);
      const int entry = cuda::tile_entry<Config>(work, t);
      const Tile tile{view, q_origin, Config::tile_kv(entry) * kBlockKv, entry};
      if constexpr (Mask::kMasksPartialTiles) {
        if (t < work.partial_count) Mask::apply(scores, tile);
      }
      // Not on a full tile inside one document (cuda/document_tiles.cuh).
      if constexpr (Segments::kMasks) {
        if (t < work.compare_end) segments.apply(scores, tile);
      }

      float tile_max = -INFINITY;
      CUTE_UNROLL
      for (int c = 0; c < kBlockKv; ++c) tile_max = fmaxf(tile_max, s[c]);
      const float new_max = fmaxf(row_max, tile_max);
      // The first kept key always moves the max (+inf > threshold; O is then multiplied by 0);
      // a row with nothing kept yet compares NaN and keeps -inf.
      float scale = 1.f;
      if ((new_max - row_max) * Config::kExp2Scale > Config::kRescaleThreshold) {
        scale = cuda::fast_exp2((row_max - new_max) * Config::kExp2Scale);
        row_max = new_max;
      }
      smem.row_scale[slot][row] = scale;
      arrive_per_warp(&smem.scale_full[slot]);

      // A row with nothing kept so far keeps max -inf; exp2 then sees -inf - 0 = -inf -> 0.
      // P in chunks of 64 keys (32 columns, one STTM.x32): each chunk of S dies as it is
      // converted, so S, P and the sum never need more than a row of S in registers.
      const float max_scaled = row_max == -INFINITY ? 0.f : row_max * Config::kExp2Scale;
      float sum = 0.f;
      CUTE_UNROLL
      for (int chunk = 0; chunk < kBlockKv / kPChunk; ++chunk) {
        CUTE_UNROLL
        for (int c = chunk * kPChunk; c < (chunk + 1) * kPChunk; ++c) {
          const float x = fmaf(s[c], Config::kExp2Scale, -max_scaled);
          s[c] = c % kFmaExp2Every == kFmaExp2Every - 1 ? exp2_fma(x) : cuda::fast_exp2(x);
          sum += s[c];
        }
        array<uint32_t, kPChunk / 2> p;  // two 16-bit values per 32-bit column
        cuda::convert_to_element<Element, kPChunk>(s.data() + chunk * kPChunk, p.data());
        store_row<kPChunk / 2>(
            tmem_columns<kPChunk / 2>(tmem_s<Config>(tmem_base),
                                      s_column + Traits::kTmemPOffset + chunk * kPChunk / 2),
            p);
      }
      row_sum = row_sum * scale + sum;
      cutlass::arch::fence_view_async_tmem_store();
      arrive_per_warp(&smem.p_full[slot]);  // after wait::st: P is in tensor memory
    }

    // out = O * out_scale and the lse (cuda/finish_row.cuh).
    const cuda::FinishedRow finished =
        cuda::finish_row<Config>(row_max, row_sum, cuda::sink_log2<Config>(params, work.head));
    if constexpr (Config::kLse)
      cuda::store_lse<Config>(params, work.batch, work.head, q_origin + row, finished.lse);
    // An item with no tile hands nothing over: the correction warps write its zeros alone.
    if (work.tile_count > 0) {
      smem.out_scale[row] = finished.out_scale;
      arrive_per_warp(&smem.out_scale_full);
    }
  });
}

}  // namespace sm100a
}  // namespace kgen
