// The reference against a second, deliberately naive formulation of docs/spec-format.md
// §3 on random inputs with every feature at once: what the hand-computed cases check one
// at a time must also hold in combination. Scores here stay small (|q|, |k| <= 1), so the
// naive form needs no max subtraction.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "compare.h"
#include "dense_reference.h"
#include "verification_inputs.h"
#include "tiny_spec.h"

namespace kgen {
namespace {

AttentionOutputs naive_attention(const Spec& spec, const AttentionInputs& in) {
  const Shape& sh = spec.shape;
  AttentionOutputs r;
  r.out.resize(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len * sh.head_dim_v));
  r.lse.resize(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len));
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t g = 0; g < sh.kv_heads; ++g)
      for (int64_t h = g * sh.group(); h < (g + 1) * sh.group(); ++h)
        for (int64_t i = 0; i < sh.q_len; ++i) {
          // Heads are visited group by group; write each row at its own place.
          const int64_t row = (b * sh.q_heads + h) * sh.q_len + i;
          double sum = spec.sinks ? std::exp(double{in.sinks[h]}) : 0.0;
          std::vector<double> acc(static_cast<std::size_t>(sh.head_dim_v), 0.0);
          bool any = spec.sinks;
          for (int64_t j = 0; j < sh.kv_len; ++j) {
            if (!spec.masks.of_head(h).allowed(i, j)) continue;
            if (spec.segment_ids &&
                in.q_segment_ids[b * sh.q_len + i] != in.kv_segment_ids[b * sh.kv_len + j])
              continue;
            const int64_t key = (b * sh.kv_heads + g) * sh.kv_len + j;
            double s = 0;
            for (int64_t c = 0; c < sh.head_dim; ++c)
              s += in.q[row * sh.head_dim + c] * in.k[key * sh.head_dim + c];
            s *= spec.scale;
            if (spec.softcap) s = *spec.softcap * std::tanh(s / *spec.softcap);
            const double e = std::exp(s);
            sum += e;
            any = true;
            for (int64_t c = 0; c < sh.head_dim_v; ++c)
              acc[c] += e * in.v[key * sh.head_dim_v + c];
          }
          for (int64_t c = 0; c < sh.head_dim_v; ++c)
            r.out[row * sh.head_dim_v + c] = any ? acc[c] / sum : 0.0;
          r.lse[row] = any ? std::log(sum) : -std::numeric_limits<double>::infinity();
        }
  return r;
}

struct Case {
  const char* mask;
  bool segment_ids;
  bool sinks;
  bool softcap;
};

TEST(CrossCheck, EveryFeatureTogether) {
  const Case cases[] = {
      {R"({"type": "full"})", false, false, false},
      {R"({"type": "causal", "offset": -3})", true, false, true},
      {R"({"type": "local", "left": 5, "right": 2, "offset": 4})", true, true, false},
      {R"({"type": "per_head", "masks": [{"type": "chunked_causal", "chunk": 5},
          {"type": "prefix_lm", "prefix": 7}, {"type": "causal"},
          {"type": "or", "masks": [{"type": "local", "left": 1, "right": 1},
                                   {"type": "causal", "offset": -9}]}]})",
       true, true, true},
  };
  uint64_t seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mask);
    Spec spec = testing::tiny_spec({.batch = 2, .q_heads = 4, .kv_heads = 2, .q_len = 13,
                                    .kv_len = 17, .head_dim = 5, .head_dim_v = 3},
                                   c.mask);
    spec.dtype = DType::kBFloat16;
    spec.scale = 0.7;
    spec.segment_ids = c.segment_ids;
    spec.sinks = c.sinks;
    if (c.softcap) spec.softcap = 0.9;
    const AttentionInputs in = verification_inputs(spec, seed++);
    const Comparison cmp = compare_outputs(dense_attention(spec, in), naive_attention(spec, in));
    EXPECT_LT(cmp.out_error, 1e-13);
    EXPECT_LT(cmp.lse_error, 1e-13);
  }
}

}  // namespace
}  // namespace kgen
