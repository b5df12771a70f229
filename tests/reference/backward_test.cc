// The float64 gradients of docs/spec-format.md §7 (verify/dense_backward.h) against central
// finite differences of the float64 forward (dense_reference.h): with L = sum(dout * out),
// dq, dk, dv and dsinks must be dL/dq, dL/dk, dL/dv and dL/dsinks. Each case turns on the
// features whose derivative it checks; the last test plants defects and sees the check fail.
#include <cmath>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "dense_backward.h"
#include "dense_reference.h"
#include "tiny_spec.h"

namespace kgen {
namespace {

using testing::tiny_spec;
using testing::TinyShape;

struct Problem {
  Spec spec;
  AttentionInputs in;
  std::vector<double> dout;
};

std::vector<double> uniform(std::mt19937_64& rng, std::size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> out(n);
  for (double& x : out) x = dist(rng);
  return out;
}

// Random q, k, v in [-1.5, 1.5] (scores reach the softcap's curved part), dout in [-1, 1],
// sinks on a grid of 1/4 so that sink +- 2^-14 is exact in float, segment ids from {0, 1}
// with q segment 2 in the last row of batch 0 (a row no key matches).
Problem problem(Spec spec, unsigned seed) {
  std::mt19937_64 rng(seed);
  const Shape& s = spec.shape;
  Problem p{spec, {}, {}};
  p.in.q = uniform(rng, static_cast<std::size_t>(s.batch * s.q_heads * s.q_len * s.head_dim), -1.5, 1.5);
  p.in.k = uniform(rng, static_cast<std::size_t>(s.batch * s.kv_heads * s.kv_len * s.head_dim), -1.5, 1.5);
  p.in.v = uniform(rng, static_cast<std::size_t>(s.batch * s.kv_heads * s.kv_len * s.head_dim_v), -1.5, 1.5);
  p.dout = uniform(rng, static_cast<std::size_t>(s.batch * s.q_heads * s.q_len * s.head_dim_v), -1.0, 1.0);
  if (spec.sinks)
    for (int64_t h = 0; h < s.q_heads; ++h) p.in.sinks.push_back(0.25f * static_cast<float>(h % 5) - 0.5f);
  if (spec.segment_ids) {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < s.q_len; ++i) p.in.q_segment_ids.push_back(b == 0 && i == s.q_len - 1 ? 2 : i % 2);
      for (int64_t j = 0; j < s.kv_len; ++j) p.in.kv_segment_ids.push_back(j < s.kv_len / 2 ? 0 : 1);
    }
  }
  return p;
}

BackwardResiduals residuals(const Problem& p) {
  const AttentionOutputs fwd = dense_attention(p.spec, p.in);
  return BackwardResiduals{fwd.out, fwd.lse, p.dout};
}

double loss(const Problem& p, const AttentionInputs& in) {
  const AttentionOutputs fwd = dense_attention(p.spec, in);
  double sum = 0;
  for (std::size_t k = 0; k < fwd.out.size(); ++k) sum += p.dout[k] * fwd.out[k];
  return sum;
}

// The first entry of `grads` that central differences of the loss disagree with, beyond
// 1e-6 of the tensor's largest magnitude; "" when every entry agrees.
std::string finite_difference_mismatch(const Problem& p, const AttentionGradients& grads) {
  std::string found;
  auto check = [&](const char* name, const std::vector<double>& analytic, double step,
                   const std::function<void(AttentionInputs&, std::size_t, double)>& nudge) {
    double largest = 1e-3;  // a floor, so that an all-zero tensor is not judged on rounding
    for (double g : analytic) largest = std::max(largest, std::abs(g));
    for (std::size_t k = 0; k < analytic.size() && found.empty(); ++k) {
      AttentionInputs up = p.in, down = p.in;
      nudge(up, k, step);
      nudge(down, k, -step);
      const double numeric = (loss(p, up) - loss(p, down)) / (2 * step);
      if (!std::isfinite(analytic[k]) || std::abs(numeric - analytic[k]) > 1e-6 * largest)
        found = std::string(name) + "[" + std::to_string(k) + "]: analytic " + std::to_string(analytic[k]) +
                ", finite differences " + std::to_string(numeric);
    }
  };
  check("dq", grads.dq, 1e-6, [](AttentionInputs& in, std::size_t k, double h) { in.q[k] += h; });
  check("dk", grads.dk, 1e-6, [](AttentionInputs& in, std::size_t k, double h) { in.k[k] += h; });
  check("dv", grads.dv, 1e-6, [](AttentionInputs& in, std::size_t k, double h) { in.v[k] += h; });
  check("dsinks", grads.dsinks, std::ldexp(1.0, -14),
        [](AttentionInputs& in, std::size_t k, double h) { in.sinks[k] += static_cast<float>(h); });
  return found;
}

struct Case {
  const char* name;
  TinyShape shape;
  const char* mask;
  std::optional<double> softcap;
  bool sinks, segment_ids;
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

Spec spec_of(const Case& c) {
  Spec spec = tiny_spec(c.shape, c.mask);
  spec.scale = 0.8;
  spec.softcap = c.softcap;
  spec.sinks = c.sinks;
  spec.segment_ids = c.segment_ids;
  spec.backward = true;
  return spec;
}

const TinyShape kSmall{.batch = 2, .q_heads = 2, .kv_heads = 2, .q_len = 3, .kv_len = 4, .head_dim = 3, .head_dim_v = 2};
const TinyShape kGqa{.batch = 1, .q_heads = 4, .kv_heads = 2, .q_len = 3, .kv_len = 3, .head_dim = 2, .head_dim_v = 3};
const TinyShape kMqa{.batch = 1, .q_heads = 3, .kv_heads = 1, .q_len = 2, .kv_len = 3, .head_dim = 2, .head_dim_v = 2};

class FiniteDifferences : public ::testing::TestWithParam<Case> {};

TEST_P(FiniteDifferences, AgreeWithTheAnalyticGradients) {
  const Problem p = problem(spec_of(GetParam()), 7);
  const AttentionGradients grads = dense_attention_backward(p.spec, p.in, residuals(p));
  EXPECT_EQ(finite_difference_mismatch(p, grads), "");
}

INSTANTIATE_TEST_SUITE_P(
    Reference, FiniteDifferences,
    ::testing::Values(
        Case{"full", kSmall, R"({"type": "full"})", std::nullopt, false, false},
        Case{"causal", kSmall, R"({"type": "causal"})", std::nullopt, false, false},
        Case{"softcap", kSmall, R"({"type": "full"})", 0.9, false, false},
        Case{"sinks", kSmall, R"({"type": "causal"})", std::nullopt, true, false},
        Case{"segment_ids", kSmall, R"({"type": "full"})", std::nullopt, false, true},
        Case{"gqa", kGqa, R"({"type": "local", "left": 1, "right": 0})", std::nullopt, false, false},
        Case{"mqa_softcap", kMqa, R"({"type": "full"})", 1.1, false, false},
        Case{"rows_with_nothing_to_attend", kSmall, R"({"type": "causal", "offset": -1})", std::nullopt, false, false},
        Case{"everything", kGqa, R"({"type": "or", "masks": [{"type": "causal"}, {"type": "local", "left": 0, "right": 1}]})",
             0.9, true, true}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// Rows that attend nothing (lse = -inf) contribute nothing and produce no NaN: with causal
// offset -1, row 0 sees no key; its dq is 0 and every gradient is finite.
TEST(Backward, RowsWithNothingToAttendGiveZeroGradients) {
  const Problem p = problem(spec_of({"", kSmall, R"({"type": "causal", "offset": -1})", 0.9, false, false}), 3);
  const BackwardResiduals res = residuals(p);
  ASSERT_TRUE(std::isinf(res.lse[0]) && res.lse[0] < 0);
  const AttentionGradients grads = dense_attention_backward(p.spec, p.in, res);
  for (int64_t c = 0; c < p.spec.shape.head_dim; ++c) EXPECT_EQ(grads.dq[static_cast<std::size_t>(c)], 0.0);
  for (const auto* tensor : {&grads.dq, &grads.dk, &grads.dv})
    for (double g : *tensor) EXPECT_TRUE(std::isfinite(g));
}

// dsinks[h] = -sum exp(sink - lse) * delta: one q row, one key, by hand. With s = 0, sink 0:
// lse = ln 2, p = 1/2, out = v/2, delta = dout * v / 2; dsinks = -(1/2) * dout * v / 2.
TEST(Backward, DsinksByHand) {
  Spec spec = spec_of({"", {.q_len = 1, .kv_len = 1}, R"({"type": "full"})", std::nullopt, true, false});
  AttentionInputs in;
  in.q = {0.0};
  in.k = {1.0};
  in.v = {3.0};
  in.sinks = {0.0f};
  const AttentionOutputs fwd = dense_attention(spec, in);
  const AttentionGradients grads = dense_attention_backward(spec, in, {fwd.out, fwd.lse, {2.0}});
  EXPECT_NEAR(grads.dsinks[0], -0.5 * 2.0 * 3.0 / 2.0, 1e-12);
  EXPECT_NEAR(grads.dv[0], 0.5 * 2.0, 1e-12);  // p * dout
}

// Sampled verification computes only some rows: those are exactly the full computation's,
// and the rows left out are 0.
TEST(Backward, SelectedRowsEqualTheFullComputation) {
  const Problem p = problem(spec_of({"", kGqa, R"({"type": "causal"})", 0.9, true, true}), 5);
  const BackwardResiduals res = residuals(p);
  const AttentionGradients full = dense_attention_backward(p.spec, p.in, res);
  GradientRows only;
  only.dq = [](int64_t b, int64_t h, int64_t i) { return (b + h + i) % 3 == 0; };
  only.dkv = [](int64_t b, int64_t g, int64_t j) { return (b + g + j) % 2 == 1; };
  only.dsinks = [](int64_t b, int64_t) { return b == 0; };
  const AttentionGradients some = dense_attention_backward(p.spec, p.in, res, only);
  const Shape& s = p.spec.shape;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.q_heads; ++h)
      for (int64_t i = 0; i < s.q_len; ++i)
        for (int64_t c = 0; c < s.head_dim; ++c) {
          const std::size_t at = static_cast<std::size_t>(((b * s.q_heads + h) * s.q_len + i) * s.head_dim + c);
          EXPECT_EQ(some.dq[at], only.dq(b, h, i) ? full.dq[at] : 0.0);
        }
    for (int64_t g = 0; g < s.kv_heads; ++g)
      for (int64_t j = 0; j < s.kv_len; ++j) {
        const int64_t row = (b * s.kv_heads + g) * s.kv_len + j;
        for (int64_t c = 0; c < s.head_dim; ++c) {
          const std::size_t at = static_cast<std::size_t>(row * s.head_dim + c);
          EXPECT_EQ(some.dk[at], only.dkv(b, g, j) ? full.dk[at] : 0.0);
        }
        for (int64_t c = 0; c < s.head_dim_v; ++c) {
          const std::size_t at = static_cast<std::size_t>(row * s.head_dim_v + c);
          EXPECT_EQ(some.dv[at], only.dkv(b, g, j) ? full.dv[at] : 0.0);
        }
      }
  }
  ASSERT_EQ(s.batch, 1);  // so that dsinks over batch 0 is the whole sum
  for (std::size_t h = 0; h < full.dsinks.size(); ++h) EXPECT_EQ(some.dsinks[h], full.dsinks[h]);
}

// The check can fail: each defect a backward kernel could have, planted in correct gradients.
TEST(Backward, FiniteDifferencesCatchPlantedDefects) {
  const Problem p = problem(spec_of({"", kGqa, R"({"type": "causal"})", 0.9, true, false}), 11);
  const BackwardResiduals res = residuals(p);
  const AttentionGradients right = dense_attention_backward(p.spec, p.in, res);
  ASSERT_EQ(finite_difference_mismatch(p, right), "");

  AttentionGradients wrong = right;
  for (double& g : wrong.dsinks) g = -g;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "dsinks with the wrong sign";

  // dk and dv from the first q head of each group only: the group sum left out. With dout 0
  // on the other heads, their ds and p * dout vanish, so the reference itself computes that.
  std::vector<double> first_heads_dout = p.dout;
  const Shape& s = p.spec.shape;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.q_heads; ++h)
      if (h % s.group() != 0)
        for (int64_t k = 0; k < s.q_len * s.head_dim_v; ++k)
          first_heads_dout[static_cast<std::size_t>((b * s.q_heads + h) * s.q_len * s.head_dim_v + k)] = 0.0;
  const AttentionGradients partial = dense_attention_backward(p.spec, p.in, {res.out, res.lse, first_heads_dout});
  wrong = right;
  wrong.dk = partial.dk;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "dk without the group sum";
  wrong = right;
  wrong.dv = partial.dv;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "dv without the group sum";

  // delta taken as 0 (a kernel that skipped rowsum(dout * out)): out = 0 in the residuals.
  const AttentionGradients no_delta =
      dense_attention_backward(p.spec, p.in, {std::vector<double>(res.out.size(), 0.0), res.lse, res.dout});
  wrong = right;
  wrong.dq = no_delta.dq;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "dq with delta = 0";

  // The softcap ignored: the gradients as if the spec had none (its tanh derivative dropped,
  // and its scores uncapped).
  Problem uncapped = p;
  uncapped.spec.softcap.reset();
  wrong = right;
  wrong.dk = dense_attention_backward(uncapped.spec, p.in, res).dk;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "dk without the softcap derivative";

  wrong = right;
  wrong.dv[1] *= 1.001;
  EXPECT_NE(finite_difference_mismatch(p, wrong), "") << "one dv entry 0.1% off";
}

}  // namespace
}  // namespace kgen
