// The swizzle functions against cute::Swizzle<B,M,S> evaluated by CuTe.
#include "tensor/swizzle.h"

#include <gtest/gtest.h>

#include "truth_fixture.h"

namespace kgen::emu::test {
namespace {

TEST(Swizzle, MatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->swizzles.size(), 4u);
  for (const SwizzleTruth& s : truth->swizzles)
    EXPECT_EQ(count_swizzle_mismatches(s, [](Swizzle sw, uint32_t a) { return sw(a); }), 0)
        << "Swizzle<" << s.swizzle.bits << "," << s.swizzle.base << "," << s.swizzle.shift << ">";
}

TEST(Swizzle, ComparisonCatchesAWrongShift) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const SwizzleTruth& s : truth->swizzles)
    EXPECT_GT(count_swizzle_mismatches(s, [](Swizzle sw, uint32_t a) {
                sw.shift += 1;
                return sw(a);
              }), 0);
}

TEST(Swizzle, NamedModesAreCutesParameters) {
  EXPECT_EQ(kSwizzle32B, (Swizzle{1, 4, 3}));
  EXPECT_EQ(kSwizzle64B, (Swizzle{2, 4, 3}));
  EXPECT_EQ(kSwizzle128B, (Swizzle{3, 4, 3}));
  EXPECT_EQ(kSwizzle128BAtom32B, (Swizzle{2, 5, 2}));
  EXPECT_EQ(kSwizzle128B.repeat_bytes(), 1024u);
  EXPECT_EQ(kSwizzle64B.repeat_bytes(), 512u);
  EXPECT_EQ(kSwizzle32B.repeat_bytes(), 256u);
  EXPECT_EQ(kSwizzle128B.span_bytes(), 128u);
  EXPECT_EQ(kSwizzle128BAtom32B.span_bytes(), 128u);
  EXPECT_EQ(kSwizzleNone(0x1234u), 0x1234u);
}

TEST(Swizzle, ActsOnTheAddressNotAnOffset) {
  // Row 1 of a 128B pattern (address bits 7-9 = 1) moves chunk 0 to chunk 1 wherever the row is.
  EXPECT_EQ(kSwizzle128B(0x400 + 0x80), 0x400u + 0x80 + 0x10);
  EXPECT_EQ(kSwizzle128B(0x80), 0x80u + 0x10);
  EXPECT_EQ(kSwizzle128B(0x400), 0x400u);  // bit 10 is above the pattern
}

}  // namespace
}  // namespace kgen::emu::test
