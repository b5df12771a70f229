// wgmma descriptors and fragments against CuTe: make_gmma_desc over GMMA::Layout_{K,MN}_*_Atom
// tiles, CLayout_64xN, ALayout_64x8/16/32. Each rule also has a planted bug the comparison catches.
#include "tensor/gmma.h"

#include <gtest/gtest.h>

#include <utility>

#include "truth_fixture.h"

namespace kgen::emu::test {
namespace {

uint32_t emulator(uint64_t d, Major major, int mn, int k, int e) { return operand_element_address(d, major, mn, k, e); }

TEST(GmmaOperand, EveryElementMatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->gmma.size(), 24u);  // 3 element sizes x 2 majors x 4 layouts
  for (const GmmaTruth& g : truth->gmma) {
    EXPECT_FALSE(g.blocks.empty()) << g.name();
    EXPECT_EQ(count_gmma_mismatches(g, emulator), 0) << g.name();
    for (const GmmaBlock& b : g.blocks) EXPECT_EQ(check_gmma_descriptor(b.descriptor), "") << g.name();
  }
}

// Planted bug: LBO and SBO swapped. Every layout in which the ISA gives LBO a meaning (all but
// K-major swizzled) must notice; K-major swizzled notices too because SBO then reads CuTe's
// placeholder LBO of 1.
TEST(GmmaOperand, ComparisonCatchesSwappedLboAndSbo) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const GmmaTruth& g : truth->gmma) {
    const int mismatches = count_gmma_mismatches(g, [](uint64_t d, Major major, int mn, int k, int e) {
      GmmaDescriptor f = decode_gmma_descriptor(d);
      std::swap(f.leading_byte_offset, f.stride_byte_offset);
      return operand_element_address(encode_gmma_descriptor(f), major, mn, k, e);
    });
    EXPECT_GT(mismatches, 0) << g.name();
  }
}

// Planted bug: the MN-major swizzled layouts read with the interleave roles of LBO and SBO (the
// ISA's famous trap).
TEST(GmmaOperand, ComparisonCatchesInterleaveRolesInSwizzledMnMajor) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const GmmaTruth& g : truth->gmma) {
    if (g.major != Major::kMN || g.layout == 0) continue;
    const int mismatches = count_gmma_mismatches(g, [](uint64_t d, Major, int mn, int k, int e) {
      const GmmaDescriptor f = decode_gmma_descriptor(d);
      const uint32_t t = 16 / e, w = gmma_swizzle(f.layout).span_bytes() / 16;
      const uint32_t chunk = mn / t;
      const uint32_t offset = (chunk / w) * f.stride_byte_offset + (chunk % w) * 16 + (k % 8) * 16 * w +
                              (k / 8) * f.leading_byte_offset + (mn % t) * e;
      return gmma_swizzle(f.layout)(f.start_address + offset);
    });
    EXPECT_GT(mismatches, 0) << g.name();
  }
}

// Planted bug: the swizzle applied to the offset from the start address instead of the address.
// CuTe's K-major blocks start in the middle of a 128- or 64-byte swizzle row (one instruction
// reads 32 bytes of K), where the two differ; a 32-byte row is exactly one block, so there the
// two agree.
TEST(GmmaOperand, ComparisonCatchesSwizzlingTheOffset) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const GmmaTruth& g : truth->gmma) {
    if (g.major != Major::kK || (g.layout != 1 && g.layout != 2)) continue;
    const int mismatches = count_gmma_mismatches(g, [](uint64_t d, Major major, int mn, int k, int e) {
      GmmaDescriptor f = decode_gmma_descriptor(d);
      const uint32_t start = f.start_address;
      f.start_address = 0;
      const uint32_t at_zero = operand_element_address(encode_gmma_descriptor(f), major, mn, k, e);
      return start + at_zero;
    });
    EXPECT_GT(mismatches, 0) << g.name();
  }
}

// Planted bug: the wrong swizzle width for a layout type (64B read as 128B).
TEST(GmmaOperand, ComparisonCatchesTheWrongLayoutType) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const GmmaTruth& g : truth->gmma) {
    if (g.layout != 2) continue;
    EXPECT_GT(count_gmma_mismatches(g, [](uint64_t d, Major major, int mn, int k, int e) {
                GmmaDescriptor f = decode_gmma_descriptor(d);
                f.layout = GmmaLayout::kSwizzle128B;
                return operand_element_address(encode_gmma_descriptor(f), major, mn, k, e);
              }), 0)
        << g.name();
  }
}

TEST(GmmaDescriptor, FieldsRoundTripAtTheIsaBitPositions) {
  const GmmaDescriptor f{0x3fff0, 0x1230, 0x4560, 5, GmmaLayout::kSwizzle64B};
  const uint64_t d = encode_gmma_descriptor(f);
  EXPECT_EQ(d & 0x3fff, 0x3fffu);
  EXPECT_EQ((d >> 16) & 0x3fff, 0x123u);
  EXPECT_EQ((d >> 32) & 0x3fff, 0x456u);
  EXPECT_EQ((d >> 49) & 0x7, 5u);
  EXPECT_EQ(d >> 62, 2u);
  const GmmaDescriptor back = decode_gmma_descriptor(d);
  EXPECT_EQ(back.start_address, f.start_address);
  EXPECT_EQ(back.leading_byte_offset, f.leading_byte_offset);
  EXPECT_EQ(back.stride_byte_offset, f.stride_byte_offset);
  EXPECT_EQ(back.base_offset, 5u);
  EXPECT_EQ(back.layout, GmmaLayout::kSwizzle64B);
  EXPECT_NE(check_gmma_descriptor(d), "");  // a base offset: refused, not guessed
  EXPECT_EQ(gmma_swizzle(GmmaLayout::kSwizzle32B), kSwizzle32B);
  EXPECT_EQ(gmma_swizzle(GmmaLayout::kSwizzle128B), kSwizzle128B);
  EXPECT_EQ(gmma_swizzle(GmmaLayout::kInterleave), kSwizzleNone);
}

TEST(GmmaFragment, AccumulatorMatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_FALSE(truth->accumulators.empty());
  for (const auto& [n, f] : truth->accumulators) {
    EXPECT_EQ(f.values, n / 2);
    EXPECT_EQ(count_fragment_mismatches(f, gmma_accumulator_coord), 0) << "N = " << n;
  }
}

TEST(GmmaFragment, ComparisonCatchesAWrongAccumulatorRow) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const auto& [n, f] : truth->accumulators)
    EXPECT_GT(count_fragment_mismatches(f, [](int t, int v) {
                FragmentCoord c = gmma_accumulator_coord(t, v);
                c.row = 16 * (t / 32) + (t % 32) / 4 + 8 * (v % 2);  // rows alternate per value, not per pair
                c.col = 8 * (v / 4) + 2 * (t % 4) + (v / 2) % 2;
                return c;
              }), 0)
        << "N = " << n;
}

TEST(GmmaFragment, ARegistersMatchCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->a_registers.size(), 3u);
  for (const auto& [bytes, f] : truth->a_registers) {
    EXPECT_EQ(f.values, 4 * (4 / bytes)) << bytes;  // four .b32 registers
    EXPECT_EQ(count_fragment_mismatches(f, [bytes](int t, int v) { return gmma_a_register_coord(t, v, bytes); }), 0)
        << bytes << "-byte elements";
  }
}

// Planted bug: registers 1 and 2 exchanged (register r / 2 picking the row half and r % 2 the k
// half, instead of the other way round).
TEST(GmmaFragment, ComparisonCatchesExchangedRowAndKHalves) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const auto& [bytes, f] : truth->a_registers)
    EXPECT_GT(count_fragment_mismatches(f, [bytes](int t, int v) {
                const int e = 4 / bytes, r = v / e, lane = t % 32;
                return FragmentCoord{16 * (t / 32) + lane / 4 + 8 * (r / 2), e * (lane % 4) + v % e + 4 * e * (r % 2)};
              }), 0)
        << bytes;
}

TEST(GmmaFragment, HandChecks) {
  // Thread 37 (warp 1, lane 5): rows 16 + 1 and 16 + 9, columns 2 and 3 (+ 8 per 4 values).
  EXPECT_EQ(gmma_accumulator_coord(37, 0), (FragmentCoord{17, 2}));
  EXPECT_EQ(gmma_accumulator_coord(37, 1), (FragmentCoord{17, 3}));
  EXPECT_EQ(gmma_accumulator_coord(37, 2), (FragmentCoord{25, 2}));
  EXPECT_EQ(gmma_accumulator_coord(37, 4), (FragmentCoord{17, 10}));
  EXPECT_EQ(gmma_a_register_coord(37, 7, 2), (FragmentCoord{25, 11}));
}

}  // namespace
}  // namespace kgen::emu::test
