// The combine of a split decode kernel (docs/decode.md, "Splits and the combine"), for every
// CUDA decode kernel: one CTA per (kv head, batch) merges the splits' partials of its q tile's
// rows, out_s (f32, normalized by its split's own sum) and lse_s (natural log, -inf for a split
// that kept nothing), by their log-sum-exp:
//   m = max(max_s lse_s, sink),  l = sum_s exp(lse_s - m) + exp(sink - m),
//   out = sum_s exp(lse_s - m) out_s / l,  lse = m + log l.
// The max is subtracted first, so partials whose lse is past exp's f32 range still merge; the
// sink joins here once (the splits finish without it, cuda/finish_row.cuh); a row no split
// kept and no sink has gets out 0 and lse -inf.
//
// Config: Element, kKvHeads, kGroup, kQLen, kRows, kSplits, kHeadDimV, kLse, kSinks.
// Params: out_s [batch][kv heads][splits][rows][head_dim_v] and lse_s [...][rows] (f32), sinks
// [q heads] (f32), out [batch][kv heads][rows][head_dim_v] (Element), lse [...][rows] (f32).
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

#include "cuda/exp2.cuh"

namespace kgen {
namespace cuda {

template <class Config, class Params>
CUTE_DEVICE void combine_splits(Params const& params) {
  using Element = typename Config::Element;
  constexpr int kRows = Config::kRows;
  constexpr int kSplits = Config::kSplits;
  constexpr int kHeadDimV = Config::kHeadDimV;
  const int kv_head = int(blockIdx.x);
  const int64_t group = int64_t(blockIdx.y) * Config::kKvHeads + kv_head;  // (batch, kv head)
  const float* lse_s = params.lse_s + group * kSplits * kRows;
  const float* out_s = params.out_s + group * kSplits * kRows * kHeadDimV;

  for (int e = int(threadIdx.x); e < kRows * kHeadDimV; e += int(blockDim.x)) {
    const int row = e / kHeadDimV;
    const int column = e % kHeadDimV;
    // In log2 units: lse * log2(e).
    float max_log2 = -INFINITY;
    CUTE_UNROLL
    for (int s = 0; s < kSplits; ++s) max_log2 = fmaxf(max_log2, lse_s[s * kRows + row] * kLog2e);
    float sink_log2 = -INFINITY;
    if constexpr (Config::kSinks) {
      sink_log2 = __ldg(params.sinks + kv_head * Config::kGroup + row / Config::kQLen) * kLog2e;
      max_log2 = fmaxf(max_log2, sink_log2);
    }
    float out = 0.f;
    float lse = -INFINITY;
    if (max_log2 != -INFINITY) {
      float sum = Config::kSinks ? fast_exp2(sink_log2 - max_log2) : 0.f;
      float acc = 0.f;
      CUTE_UNROLL
      for (int s = 0; s < kSplits; ++s) {
        const float weight = fast_exp2(lse_s[s * kRows + row] * kLog2e - max_log2);
        sum += weight;
        acc += weight * out_s[(s * kRows + row) * kHeadDimV + column];
      }
      out = acc / sum;
      lse = (max_log2 + log2f(sum)) * kLn2;
    }
    params.out[(group * kRows + row) * kHeadDimV + column] = Element(out);
    if constexpr (Config::kLse) {
      if (column == 0) params.lse[group * kRows + row] = lse;
    }
  }
}

}  // namespace cuda
}  // namespace kgen
