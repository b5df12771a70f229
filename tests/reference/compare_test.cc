// The comparison helper must catch what it exists to catch.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "compare.h"
#include "dense_reference.h"
#include "verification_inputs.h"
#include "tiny_spec.h"

namespace kgen {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Compare, TolerancesAreThoseOfTheSpec) {
  EXPECT_EQ(kFloat32Tolerance.out_relative, 1e-5);
  EXPECT_EQ(kBFloat16Tolerance.out_relative, 2e-2);
  EXPECT_EQ(kBFloat16Tolerance.lse_absolute, 1e-3);
  EXPECT_EQ(kFloat16Tolerance.out_relative, 2e-2);
  EXPECT_EQ(kFloat16Tolerance.lse_absolute, 1e-3);
  EXPECT_EQ(tolerance_for(DType::kBFloat16).out_relative, 2e-2);
  EXPECT_EQ(tolerance_for(DType::kFloat16).lse_absolute, 1e-3);
  EXPECT_EQ(tolerance_for(DType::kFloat32).out_relative, 1e-5);
}

// The reference outputs of a small random problem, as a kernel would be judged on.
AttentionOutputs reference_outputs() {
  Spec spec = testing::tiny_spec({.batch = 2, .q_heads = 2, .kv_heads = 1, .q_len = 4,
                                  .kv_len = 4, .head_dim = 2, .head_dim_v = 3},
                                 R"({"type": "causal"})");
  spec.dtype = DType::kBFloat16;
  return dense_attention(spec, verification_inputs(spec, 1));
}

double max_abs(const std::vector<double>& values) {
  double m = 0;
  for (double x : values) m = std::max(m, std::fabs(x));
  return m;
}

TEST(Compare, IdenticalOutputsHaveNoError) {
  const AttentionOutputs ref = reference_outputs();
  const Comparison c = compare_outputs(ref, ref);
  EXPECT_EQ(c.out_error, 0.0);
  EXPECT_EQ(c.lse_error, 0.0);
  EXPECT_EQ(c.worst_out_index, -1);
  EXPECT_EQ(c.worst_lse_index, -1);
  EXPECT_TRUE(c.within(kFloat32Tolerance));
}

TEST(Compare, APlantedWrongOutputIsCaught) {
  const AttentionOutputs ref = reference_outputs();
  AttentionOutputs bad = ref;
  bad.out[17] += 0.05 * max_abs(ref.out);
  const Comparison c = compare_outputs(bad, ref);
  EXPECT_NEAR(c.out_error, 0.05, 1e-12);
  EXPECT_EQ(c.worst_out_index, 17);
  EXPECT_FALSE(c.within(kBFloat16Tolerance));
  EXPECT_EQ(c.lse_error, 0.0);
}

TEST(Compare, AnErrorWithinTheToleranceOfOneDtypeFailsATighterOne) {
  const AttentionOutputs ref = reference_outputs();
  AttentionOutputs close = ref;
  close.out[3] -= 0.01 * max_abs(ref.out);
  const Comparison c = compare_outputs(close, ref);
  EXPECT_TRUE(c.within(kBFloat16Tolerance));
  EXPECT_FALSE(c.within(kFloat32Tolerance));
}

TEST(Compare, APlantedWrongLseIsCaught) {
  const AttentionOutputs ref = reference_outputs();
  AttentionOutputs bad = ref;
  bad.lse[5] += 2e-3;
  const Comparison c = compare_outputs(bad, ref);
  EXPECT_NEAR(c.lse_error, 2e-3, 1e-12);
  EXPECT_EQ(c.worst_lse_index, 5);
  EXPECT_FALSE(c.within(kBFloat16Tolerance));
}

TEST(Compare, MinusInfinityLse) {
  EXPECT_EQ(absolute_lse_error({-kInf, 1.0}, {-kInf, 1.0}), 0.0);
  int64_t worst = -2;
  EXPECT_EQ(absolute_lse_error({-kInf, 0.0}, {-kInf, -kInf}, &worst), kInf);
  EXPECT_EQ(worst, 1);
  EXPECT_EQ(absolute_lse_error({-kInf}, {3.0}), kInf);
  EXPECT_EQ(absolute_lse_error({kInf}, {-kInf}), kInf);
}

TEST(Compare, NanIsAnInfiniteError) {
  // A NaN must not slip through a `diff > worst` comparison, which is false for NaN.
  EXPECT_EQ(relative_out_error({1.0, std::nan("")}, {1.0, 2.0}), kInf);
  EXPECT_EQ(absolute_lse_error({std::nan("")}, {std::nan("")}), kInf);
}

TEST(Compare, AnAllZeroReference) {
  // Every row fully masked: only an exact match passes.
  EXPECT_EQ(relative_out_error({0.0, 0.0}, {0.0, 0.0}), 0.0);
  EXPECT_EQ(relative_out_error({0.0, 1e-30}, {0.0, 0.0}), kInf);
}

TEST(Compare, RelativeToTheLargestReferenceValue) {
  // max |diff| = 0.5 over max |ref| = 10, wherever each occurs.
  int64_t worst = -2;
  EXPECT_DOUBLE_EQ(relative_out_error({10.0, 0.5, -1.25}, {10.0, 1.0, -1.0}, &worst), 0.05);
  EXPECT_EQ(worst, 1);
}

TEST(Compare, MismatchedSizesAreRefused) {
  const AttentionOutputs ref = reference_outputs();
  AttentionOutputs shorter = ref;
  shorter.out.pop_back();
  EXPECT_THROW(compare_outputs(shorter, ref), std::invalid_argument);
  try {
    compare_outputs(shorter, ref);
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind("out:", 0), 0u) << error.what();
  }
  shorter = ref;
  shorter.lse.clear();
  try {
    compare_outputs(shorter, ref);
    ADD_FAILURE() << "an empty lse was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind("lse:", 0), 0u) << error.what();
  }
}

}  // namespace
}  // namespace kgen
