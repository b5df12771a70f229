// The end of one row's online softmax, for every CUDA kernel (docs/spec-format.md, "Top-level
// keys"): out = O / l and lse = m + log(l), with an attention sink (a logit with no value row)
// folded into the max and the sum first. The sm90a forward's epilogue and the sm100a
// softmax warpgroup both finish here; a kernel that writes partial statistics (a split of
// the kv sequence) finishes without the sink, which is then added once where the partials
// meet.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

#include "cuda/exp2.cuh"

namespace kgen {
namespace cuda {

struct FinishedRow {
  float out_scale;  // out = O * out_scale; 0 for a row with nothing kept
  float lse;        // natural log; -inf for a row with nothing kept
};

// The sink of q head `head` in log2 units (Config::kSinks), read once per work item.
template <class Config, class Params>
CUTE_DEVICE float sink_log2(Params const& params, int head) {
  if constexpr (Config::kSinks) {
    return __ldg(params.sinks + head) * kLog2e;
  } else {
    return 0.f;
  }
}

// `row_max`: the row's running max in the score domain x (-inf when nothing was kept);
// `row_sum`: its sum of exp2(Config::kExp2Scale (x - row_max)) over the kept keys, every
// column of the row summed. kSink: fold in the sink `sink_log2` (sink_log2()); a sink of
// -inf is no sink.
template <class Config, bool kSink = Config::kSinks>
CUTE_DEVICE FinishedRow finish_row(float row_max, float row_sum, float sink_log2) {
  float max_log2 = row_max == -INFINITY ? -INFINITY : row_max * Config::kExp2Scale;
  float sum = row_sum;
  float out_scale;
  if constexpr (kSink) {
    const float new_max = fmaxf(max_log2, sink_log2);
    const float base = new_max == -INFINITY ? 0.f : new_max;
    const float rescale = fast_exp2(max_log2 - base);
    sum = sum * rescale + fast_exp2(sink_log2 - base);
    max_log2 = new_max;
    out_scale = sum > 0.f ? rescale / sum : 0.f;
  } else {
    out_scale = sum > 0.f ? 1.f / sum : 0.f;  // nothing kept: out = 0
  }
  return FinishedRow{out_scale, sum > 0.f ? (max_log2 + log2f(sum)) * kLn2 : -INFINITY};
}

// lse[batch][head][i] of a forward's lse output (Config::kLse); rows past q_len are padding.
template <class Config, class Params>
CUTE_DEVICE void store_lse(Params const& params, int batch, int head, int i, float lse) {
  if (i < Config::kQLen)
    params.lse[(int64_t(batch) * Config::kQHeads + head) * Config::kQLen + i] = lse;
}

}  // namespace cuda
}  // namespace kgen
