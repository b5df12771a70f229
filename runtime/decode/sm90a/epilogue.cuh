// The decode consumer's epilogue: each row finished by cuda/finish_row.cuh and stored from the
// accumulator's registers straight to global memory (a q tile row is one (q head, token) of
// out; the rows of one kv head are contiguous there). Unsplit: out (Element) and lse, the sink
// of the row's q head in the softmax. Split: the partials out_s (f32, normalized by this split's
// own sum) and lse_s, without the sink, which the combine adds once (decode/cuda/combine.cuh).
// A split that kept nothing (or walked no block) writes out_s 0 and lse_s -inf.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>

#include "cuda/convert.cuh"
#include "cuda/finish_row.cuh"
#include "decode/sm90a/work.cuh"
#include "sm90a/forward/math.cuh"
#include "sm90a/forward/online_softmax.cuh"
#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params, class Fragment>
CUTE_DEVICE void store_decode_rows(Params const& params, OnlineSoftmax<Config> const& softmax,
                                   Fragment& acc_o, DecodeWork const& work, int thread) {
  using Element = typename Config::Element;
  using View = AccumulatorView<Config::kHeadDimV>;
  constexpr int kRows = Config::kRows;
  constexpr bool kSplit = Config::kSplits > 1;
  const View view(thread, work.row_origin);
  const int64_t group = int64_t(work.batch) * Config::kKvHeads + work.kv_head;  // (batch, kv head)
  // The first row of this CTA's part of out (or of out_s) in rows of head_dim_v.
  const int64_t first_row = kSplit ? (group * Config::kSplits + work.split) * kRows : group * kRows;

  float out_scale[View::kRows];
  float lse[View::kRows];
  CUTE_UNROLL
  for (int r = 0; r < View::kRows; ++r) {
    const int row = view.row(r) < kRows ? view.row(r) : 0;  // padding rows are never stored
    const float sum = quad_sum(softmax.row_sum[r]);
    cuda::FinishedRow finished;
    if constexpr (kSplit) {
      finished = cuda::finish_row<Config, false>(softmax.row_max[r], sum, 0.f);
    } else {
      const int head = work.kv_head * Config::kGroup + row / Config::kQLen;
      finished =
          cuda::finish_row<Config>(softmax.row_max[r], sum, cuda::sink_log2<Config>(params, head));
    }
    out_scale[r] = finished.out_scale;
    lse[r] = finished.lse;
  }
  scale_rows(acc_o, out_scale);

  CUTE_UNROLL
  for (int r = 0; r < View::kRows; ++r) {
    const int row = view.row(r);
    if (row >= kRows) continue;
    const int64_t base = (first_row + row) * Config::kHeadDimV;
    CUTE_UNROLL
    for (int c = 0; c < View::kColumns; c += 2) {  // columns c and c + 1 are adjacent
      const float pair[2] = {acc_o(View::index(r, c)), acc_o(View::index(r, c + 1))};
      const int64_t at = base + view.column(c);
      if constexpr (kSplit) {
        *reinterpret_cast<float2*>(params.out_s + at) = make_float2(pair[0], pair[1]);
      } else {
        cuda::convert_to_element<Element, 2>(pair, static_cast<Element*>(params.out) + at);
      }
    }
    if (thread % 4 == 0) {  // one thread of the row's quad
      if constexpr (kSplit) {
        params.lse_s[first_row + row] = lse[r];
      } else if constexpr (Config::kLse) {
        params.lse[first_row + row] = lse[r];
      }
    }
  }
}

}  // namespace sm90a
}  // namespace kgen
