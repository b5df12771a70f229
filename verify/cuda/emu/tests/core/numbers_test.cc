// The narrow float conversions every cvt and packed op relies on.
#include <gtest/gtest.h>

#include <cmath>

#include "core/numbers.h"

namespace kgen::emu {
namespace {

TEST(Numbers, Bf16RoundsToNearestEven) {
  EXPECT_EQ(to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even keeps 1.
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even rounds up.
  EXPECT_EQ(to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f, Rounding::rz), 0x3f80);
  EXPECT_EQ(to_bf16(1.0f + 0x1p-20f, Rounding::rp), 0x3f81);
}

TEST(Numbers, F16RoundsOverflowsAndKeepsSubnormals) {
  EXPECT_EQ(to_f16(1.0f), 0x3c00);
  EXPECT_EQ(to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(to_f16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(to_f16(65520.0f, Rounding::rz), 0x7bff);
  EXPECT_EQ(to_f16(0x1p-24f), 0x0001);  // the smallest subnormal
  EXPECT_EQ(to_f16(0x1p-25f), 0x0000);  // halfway to zero: even
  EXPECT_EQ(to_f16(-0.0f), 0x8000);
  EXPECT_EQ(from_f16(0x0001), 0x1p-24f);
  EXPECT_EQ(from_f16(0x3555), 0.333251953125f);
}

TEST(Numbers, NanIsCanonicalAndInfinityKept) {
  EXPECT_EQ(to_bf16(std::nanf("")), 0x7fc0);
  EXPECT_EQ(to_f16(INFINITY), 0x7c00);
  EXPECT_EQ(to_bf16(-INFINITY), 0xff80);
  EXPECT_TRUE(std::isnan(from_bf16(0x7fc1)));
}

TEST(Numbers, F32FromF64HonoursDirectedRounding) {
  const double third = 1.0 / 3.0;
  EXPECT_LT(to_f32(third, Rounding::rz), third);
  EXPECT_GT(to_f32(third, Rounding::rp), third);
  EXPECT_EQ(to_f32(third, Rounding::rn), static_cast<float>(third));
}

}  // namespace
}  // namespace kgen::emu
