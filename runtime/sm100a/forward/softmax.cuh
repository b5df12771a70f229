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
#include <cutlass/numeric_conversion.h>

#include "cuda/exp2.cuh"
#include "cuda/score_mods.cuh"
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
  constexpr int kBlockKv = Config::kBlockKv;
  const int row = int(threadIdx.x) % 128;
  constexpr int kPChunk = 64;  // keys of P per tensor-memory store
  // One exponential in kFmaExp2Every on the FMA pipe, the others on MUFU (exp2_fma.cuh).
  constexpr int kFmaExp2Every = 4;
  static_assert(kBlockKv % kPChunk == 0, "P is stored 32 columns at a time");
  array<float, kBlockKv> s;

  for_each_work_item<Config>([&](cuda::CtaWork const& work, ItemCounts const& at) {
    const int i = work.q_block * Config::kBlockQ + row;  // the query position
    // The row's running max, in the score domain x, and its sum of exp2(kExp2Scale (x -
    // row_max)) over the kept keys.
    float row_max = -INFINITY;
    float row_sum = 0.f;
    const typename Config::SegmentMask segments(params, work.batch, i);

    CUTE_NO_UNROLL
    for (int t = 0; t < work.tile_count; ++t) {
      const int slot = (at.tiles + t) % 2;  // S, P and the factors alternate over the CTA's tiles
      const uint32_t s_column = slot == 0 ? Traits::kTmemS0 : Traits::kTmemS1;
      wait_for_tmem(&smem.s_full[slot], ((at.tiles + t) / 2) & 1);
      load_row<kBlockKv>(tmem_s<Config>(tmem_base + s_column), s);
      cutlass::arch::fence_view_async_tmem_load();

      if constexpr (ScoreMod::kModifies) {  // before the masks: they stay -inf
        Tensor scores = make_tensor(make_rmem_ptr(s.data()), make_layout(Int<kBlockKv>{}));
        ScoreMod::apply(scores);
      }
      const int col_first = Config::tile_kv(work.tile_begin + t) * kBlockKv;
      if constexpr (Mask::kMasksPartialTiles) {
        if (t < work.partial_count) Mask::apply(s, work.tile_begin + t, row, i, col_first);
      }
      if constexpr (Config::SegmentMask::kMasks) segments.apply(s, col_first);

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
        cutlass::NumericArrayConverter<Element, float, kPChunk> to_element;
        *reinterpret_cast<cutlass::Array<Element, kPChunk>*>(p.data()) = to_element(
            *reinterpret_cast<cutlass::Array<float, kPChunk> const*>(s.data() + chunk * kPChunk));
        store_row<kPChunk / 2>(
            tmem_columns<kPChunk / 2>(tmem_s<Config>(tmem_base),
                                      s_column + Traits::kTmemPOffset + chunk * kPChunk / 2),
            p);
      }
      row_sum = row_sum * scale + sum;
      cutlass::arch::fence_view_async_tmem_store();
      arrive_per_warp_after_tmem(&smem.p_full[slot]);
    }

    // out = O / l (0 for a row with nothing kept) and lse = m + log(l). A sink
    // (Config::kSinks) is a logit with no value row: it joins the max and the sum only.
    float max_log2 = row_max == -INFINITY ? -INFINITY : row_max * Config::kExp2Scale;
    float sum = row_sum;
    float out_scale;
    if constexpr (Config::kSinks) {
      const float sink_log2 = __ldg(params.sinks + work.head) * cuda::kLog2e;
      const float new_max = fmaxf(max_log2, sink_log2);
      const float base = new_max == -INFINITY ? 0.f : new_max;  // a sink of -inf is no sink
      const float rescale = cuda::fast_exp2(max_log2 - base);
      sum = sum * rescale + cuda::fast_exp2(sink_log2 - base);
      max_log2 = new_max;
      out_scale = sum > 0.f ? rescale / sum : 0.f;
    } else {
      out_scale = sum > 0.f ? 1.f / sum : 0.f;  // nothing kept: out = 0
    }
    if constexpr (Config::kLse) {
      if (i < Config::kQLen)
        params.lse[(int64_t(work.batch) * Config::kQHeads + work.head) * Config::kQLen + i] =
            sum > 0.f ? (max_log2 + log2f(sum)) * cuda::kLn2 : -INFINITY;
    }
    // An item with no tile hands nothing over: the correction warps write its zeros alone.
    if (work.tile_count > 0) {
      smem.out_scale[row] = out_scale;
      arrive_per_warp(&smem.out_scale_full);
    }
  });
}

}  // namespace sm100a
}  // namespace kgen
