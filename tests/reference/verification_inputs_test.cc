// Verification inputs: deterministic, in the spec's dtype, and shaped so that every feature
// changes the outputs (docs/verification.md). The properties are measured here on the
// logits the inputs produce; tests/tpu_verify shows kernels without a feature failing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <gtest/gtest.h>

#include "dense_reference.h"
#include "dtype_rounding.h"
#include "tiny_spec.h"
#include "verification_inputs.h"

namespace kgen {
namespace {

Spec spec_for(DType dtype, int64_t len = 512, const std::string& mask = R"({"type": "causal"})") {
  Spec spec = testing::tiny_spec({.batch = 2, .q_heads = 4, .kv_heads = 2, .q_len = len, .kv_len = len,
                                  .head_dim = 64, .head_dim_v = 32}, mask);
  spec.dtype = dtype;
  spec.scale = 0.125;
  return spec;
}

bool same(const AttentionInputs& a, const AttentionInputs& b) {
  return a.q == b.q && a.k == b.k && a.v == b.v && a.q_segment_ids == b.q_segment_ids &&
         a.kv_segment_ids == b.kv_segment_ids && a.sinks == b.sinks;
}

// scale * q.k for (b, h, i, j), before softcap.
struct Logits {
  const Spec& spec;
  const AttentionInputs& in;
  double operator()(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const Shape& s = spec.shape;
    const double* q = &in.q[static_cast<std::size_t>(((b * s.q_heads + h) * s.q_len + i) * s.head_dim)];
    const double* k = &in.k[static_cast<std::size_t>(((b * s.kv_heads + h / s.group()) * s.kv_len + j) * s.head_dim)];
    double dot = 0;
    for (int64_t c = 0; c < s.head_dim; ++c) dot += q[c] * k[c];
    return spec.scale * dot;
  }
};

TEST(VerificationInputs, AreDeterministicPerSeed) {
  Spec spec = spec_for(DType::kBFloat16);
  spec.segment_ids = spec.sinks = true;
  EXPECT_TRUE(same(verification_inputs(spec, 42), verification_inputs(spec, 42)));
  EXPECT_FALSE(same(verification_inputs(spec, 42), verification_inputs(spec, 43)));
}

TEST(VerificationInputs, FitTheSpecAndItsDtype) {
  for (DType dtype : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    Spec spec = spec_for(dtype);
    spec.segment_ids = spec.sinks = true;
    const AttentionInputs in = verification_inputs(spec, 7);
    EXPECT_NO_THROW(check_attention_inputs(spec, in));
    for (const auto* array : {&in.q, &in.k, &in.v})
      for (double x : *array) {
        ASSERT_NE(x, 0.0);
        ASSERT_TRUE(std::isfinite(x));
        ASSERT_EQ(round_to_dtype(x, dtype), x) << dtype_name(dtype);
      }
    for (double x : in.v) ASSERT_LE(std::fabs(x), 1.0);
  }
  Spec plain = spec_for(DType::kBFloat16);
  const AttentionInputs in = verification_inputs(plain, 1);
  EXPECT_TRUE(in.q_segment_ids.empty());
  EXPECT_TRUE(in.sinks.empty());
}

// A kernel that ignores the softcap sees other logits: most structured rows lie beyond 2c.
TEST(VerificationInputs, LogitsReachWellPastTheSoftcap) {
  Spec spec = spec_for(DType::kBFloat16);
  spec.softcap = 30.0;
  const AttentionInputs in = verification_inputs(spec, 3);
  const Logits logit{spec, in};
  int64_t beyond = 0, total = 0;
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 512; i += 3)
      for (int64_t j = 0; j < 512; j += 5, ++total) beyond += std::fabs(logit(0, h, i, j)) > 2 * 30.0;
  EXPECT_GT(static_cast<double>(beyond) / static_cast<double>(total), 0.3) << beyond << " of " << total;
}

// Without a softcap, 16-bit inputs put some row maxima past exp's f32 overflow (88.7), and
// many rows' causal max lies in their last kv block of 128: the running max moves late.
TEST(VerificationInputs, MaximaOverflowExpAndMoveLate) {
  const Spec spec = spec_for(DType::kBFloat16);
  const AttentionInputs in = verification_inputs(spec, 5);
  const Logits logit{spec, in};
  int64_t overflowing = 0, late = 0, rows = 0;
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 256; i < 512; ++i, ++rows) {
      double best = -std::numeric_limits<double>::infinity();
      int64_t argmax = 0;
      for (int64_t j = 0; j <= i; ++j)
        if (const double s = logit(1, h, i, j); s > best) best = s, argmax = j;
      overflowing += best > 88.8;
      late += argmax >= (i / 128) * 128 && i >= 128;
    }
  EXPECT_GT(overflowing, rows / 10) << "of " << rows;
  EXPECT_GT(late, rows / 5) << "of " << rows;
}

// float32 keeps logits small: its 1e-5 tolerance is about one ulp of a logit of 100.
TEST(VerificationInputs, Float32LogitsStayModerate) {
  const Spec spec = spec_for(DType::kFloat32);
  const AttentionInputs in = verification_inputs(spec, 5);
  const Logits logit{spec, in};
  double largest = 0;
  for (int64_t i = 0; i < 512; i += 7)
    for (int64_t j = 0; j < 512; j += 7) largest = std::max(largest, std::fabs(logit(0, 0, i, j)));
  EXPECT_GT(largest, 6.0);
  EXPECT_LT(largest, 24.0);
}

// The sink's share exp(sink - m) / l: above 1/2 in some rows, below 1e-3 in others.
TEST(VerificationInputs, SinksDominateSomeRowsAndVanishInOthers) {
  Spec spec = spec_for(DType::kBFloat16);
  spec.sinks = true;
  const AttentionInputs in = verification_inputs(spec, 9);
  const Logits logit{spec, in};
  int64_t dominant = 0, negligible = 0;
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 512; i += 4) {
      double m = in.sinks[static_cast<std::size_t>(h)];
      for (int64_t j = 0; j <= i; ++j) m = std::max(m, logit(0, h, i, j));
      double l = std::exp(in.sinks[static_cast<std::size_t>(h)] - m);
      const double sink_term = l;
      for (int64_t j = 0; j <= i; ++j) l += std::exp(logit(0, h, i, j) - m);
      dominant += sink_term / l > 0.5;
      negligible += sink_term / l < 1e-3;
    }
  EXPECT_GT(dominant, 20);
  EXPECT_GT(negligible, 20);
}

// Many documents per row, some moved on the kv side, some absent there: rows with nothing
// to attend occur.
TEST(VerificationInputs, SegmentIdsAreManyDocumentsSomeAbsentFromKv) {
  Spec spec = spec_for(DType::kBFloat16, 2048);
  spec.segment_ids = true;
  const AttentionInputs in = verification_inputs(spec, 11);
  for (int64_t b = 0; b < 2; ++b) {
    const auto q_first = in.q_segment_ids.begin() + b * 2048;
    const auto kv_first = in.kv_segment_ids.begin() + b * 2048;
    const std::set<int32_t> q_ids(q_first, q_first + 2048), kv_ids(kv_first, kv_first + 2048);
    EXPECT_GE(q_ids.size(), 16u);
    EXPECT_TRUE(std::is_sorted(q_first, q_first + 2048));
    int64_t orphans = 0;
    for (auto it = q_first; it != q_first + 2048; ++it) orphans += !kv_ids.count(*it);
    EXPECT_GT(orphans, 0) << "batch " << b << ": every q document has keys";
    EXPECT_LT(orphans, 2048 / 2);
  }
  EXPECT_NE(in.q_segment_ids, in.kv_segment_ids) << "the kv ids repeat the q ids: no document moved or absent";
}

}  // namespace
}  // namespace kgen
