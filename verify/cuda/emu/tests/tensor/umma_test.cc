// tcgen05: shared memory descriptors against CuTe's make_umma_desc over its canonical layouts
// (128B_BASE32B included), instruction descriptors against UMMA::make_instr_desc, and the
// tensor-memory rules of the ISA by hand.
#include "tensor/umma.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "truth_fixture.h"

namespace kgen::emu::test {
namespace {

TEST(UmmaOperand, EveryElementMatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->umma.size(), 27u);  // 3 element sizes x (4 K-major + 5 MN-major layouts)
  for (const GmmaTruth& g : truth->umma) {
    EXPECT_FALSE(g.blocks.empty()) << g.name();
    EXPECT_EQ(count_gmma_mismatches(g, umma_operand_element_address), 0) << g.name();
    for (const GmmaBlock& b : g.blocks) {
      EXPECT_EQ(check_umma_smem_descriptor(b.descriptor, g.major), "") << g.name();
      EXPECT_EQ(int(decode_umma_smem_descriptor(b.descriptor).layout), g.layout) << g.name();
    }
  }
}

TEST(UmmaOperand, ComparisonCatchesSwappedLboAndSbo) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const GmmaTruth& g : truth->umma)
    EXPECT_GT(count_gmma_mismatches(g, [](uint64_t d, Major major, int mn, int k, int e) {
                UmmaSmemDescriptor f = decode_umma_smem_descriptor(d);
                std::swap(f.leading_byte_offset, f.stride_byte_offset);
                return umma_operand_element_address(encode_umma_smem_descriptor(f), major, mn, k, e);
              }), 0)
        << g.name();
}

// Planted bug: 128B_BASE32B read as plain 128B (16-byte atoms, 8-row groups).
TEST(UmmaOperand, ComparisonCatchesBase32BReadAs128B) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  int checked = 0;
  for (const GmmaTruth& g : truth->umma) {
    if (g.layout != 1) continue;
    ++checked;
    EXPECT_GT(count_gmma_mismatches(g, [](uint64_t d, Major major, int mn, int k, int e) {
                UmmaSmemDescriptor f = decode_umma_smem_descriptor(d);
                f.layout = UmmaLayout::kSwizzle128B;
                return umma_operand_element_address(encode_umma_smem_descriptor(f), major, mn, k, e);
              }), 0)
        << g.name();
  }
  EXPECT_EQ(checked, 3);
}

TEST(UmmaSmemDescriptor, FieldsAndRefusals) {
  UmmaSmemDescriptor f;
  f.start_address = 0x12340;
  f.leading_byte_offset = 0x100;
  f.stride_byte_offset = 0x400;
  f.layout = UmmaLayout::kSwizzle64B;
  const uint64_t d = encode_umma_smem_descriptor(f);
  EXPECT_EQ((d >> 46) & 0x7, 1u);  // the fixed 0b001
  EXPECT_EQ(d >> 61, 4u);
  EXPECT_EQ(check_umma_smem_descriptor(d, Major::kK), "");
  EXPECT_NE(check_umma_smem_descriptor(d & ~(uint64_t{7} << 46), Major::kK), "");
  EXPECT_NE(check_umma_smem_descriptor(d | uint64_t{1} << 52, Major::kK), "");   // absolute LBO mode
  EXPECT_NE(check_umma_smem_descriptor(d | uint64_t{3} << 49, Major::kK), "");   // base offset
  f.layout = UmmaLayout(3);
  EXPECT_NE(check_umma_smem_descriptor(encode_umma_smem_descriptor(f), Major::kMN), "");
  f.layout = UmmaLayout::kSwizzle128BBase32B;
  EXPECT_NE(check_umma_smem_descriptor(encode_umma_smem_descriptor(f), Major::kK), "");
  EXPECT_EQ(check_umma_smem_descriptor(encode_umma_smem_descriptor(f), Major::kMN), "");
}

uint32_t format_code(const std::string& type) {
  // The ISA's instruction-descriptor format codes.
  static const std::map<std::string, uint32_t> codes = {{"f16", 0}, {"bf16", 1}, {"tf32", 2}, {"e4m3", 0}, {"e5m2", 1}};
  return codes.at(type);
}

TEST(UmmaInstrDescriptor, MatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_FALSE(truth->instr_descriptors.empty());
  for (const InstrDescriptorTruth& t : truth->instr_descriptors) {
    UmmaInstrDescriptor f;
    f.a_format = format_code(t.a);
    f.b_format = format_code(t.b);
    f.c_format = t.c == "f16" ? 0 : 1;
    f.m = uint32_t(t.m);
    f.n = uint32_t(t.n);
    f.a_major = t.a_mn_major ? Major::kMN : Major::kK;
    f.b_major = t.b_mn_major ? Major::kMN : Major::kK;
    f.a_negate = t.a_negate;
    EXPECT_EQ(encode_umma_instr_descriptor(f), t.value) << t.a << " M" << t.m << " N" << t.n;
    const UmmaInstrDescriptor back = decode_umma_instr_descriptor(t.value);
    EXPECT_EQ(back.m, f.m);
    EXPECT_EQ(back.n, f.n);
    EXPECT_EQ(back.a_major, f.a_major);
    EXPECT_EQ(back.b_major, f.b_major);
    EXPECT_EQ(back.a_format, f.a_format);
    EXPECT_EQ(back.c_format, f.c_format);
    EXPECT_EQ(back.a_negate, f.a_negate);
  }
}

// Planted bug: M at bit 23 (one below the ISA's 24).
TEST(UmmaInstrDescriptor, ComparisonCatchesMAtBit23) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const InstrDescriptorTruth& t : truth->instr_descriptors) {
    UmmaInstrDescriptor f = decode_umma_instr_descriptor(t.value);
    const uint32_t m = f.m;
    f.m = 0;
    const uint32_t wrong = encode_umma_instr_descriptor(f) | (m >> 4) << 23;
    EXPECT_NE(wrong, t.value);
  }
}

TEST(TensorMemory, ThirtyTwoByThirtyTwoBitShape) {
  const uint32_t taddr = (64u << 16) | 16u;  // warp 2 of a warpgroup: lanes 64..95, column 16
  EXPECT_EQ(check_tcgen05_32x32b(taddr, 2, 32), "");
  EXPECT_EQ(check_tcgen05_32x32b(taddr, 6, 32), "");  // warp 6 is warp 2 of the second warpgroup
  EXPECT_NE(check_tcgen05_32x32b(taddr, 1, 32), "");  // warp 1 owns lanes 32..63
  EXPECT_NE(check_tcgen05_32x32b(taddr, 2, 500), "");
  EXPECT_EQ(tcgen05_32x32b_cell(taddr, 5, 3), (TmemCell{69, 19}));
  EXPECT_EQ(tmem_cell(taddr), (TmemCell{64, 16}));
}

TmemShape shape_named(const std::string& name) {
  static const std::map<std::string, TmemShape> shapes = {
      {"32x32b", TmemShape::k32x32b},   {"16x64b", TmemShape::k16x64b},     {"16x128b", TmemShape::k16x128b},
      {"16x256b", TmemShape::k16x256b}, {"16x32bx2", TmemShape::k16x32bx2},
  };
  return shapes.at(name);
}

// Every register of every thread of CuTe's SM100_TMEM_LOAD atoms (each shape, .x1 and a larger
// .num) lands in the cell tcgen05_ld_st_cell names.
TEST(TensorMemory, LoadAndStoreShapesMatchCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->tmem.size(), 10u);
  for (const TmemCopyTruth& t : truth->tmem) {
    const TmemShape shape = shape_named(t.shape);
    EXPECT_EQ(t.registers, int(tcgen05_registers(shape, uint32_t(t.num)))) << t.shape << " x" << t.num;
    EXPECT_EQ(count_tmem_copy_mismatches(t, [&](const std::string&, int lane, int reg, uint32_t split) {
                return tcgen05_ld_st_cell(shape, 0, lane, reg, split);
              }),
              0)
        << t.shape << " x" << t.num;
  }
}

// Planted bug: the two row halves of a 16-lane shape swapped (rows 8..15 first).
TEST(TensorMemory, ComparisonCatchesSwappedRowHalves) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmemCopyTruth& t : truth->tmem) {
    const TmemShape shape = shape_named(t.shape);
    if (tcgen05_lanes(shape) != 16 || shape == TmemShape::k16x32bx2) continue;
    EXPECT_GT(count_tmem_copy_mismatches(t, [&](const std::string&, int lane, int reg, uint32_t split) {
                TmemCell c = tcgen05_ld_st_cell(shape, 0, lane, reg, split);
                c.lane ^= 8;
                return c;
              }),
              0)
        << t.shape;
  }
}

TEST(TensorMemory, SixteenLaneShapesTakeEitherHalfOfTheQuarter) {
  EXPECT_EQ(check_tcgen05_access(TmemShape::k16x256b, (32u << 16) | 8, 1, 16), "");
  EXPECT_EQ(check_tcgen05_access(TmemShape::k16x256b, (48u << 16) | 8, 1, 16), "");
  EXPECT_NE(check_tcgen05_access(TmemShape::k16x256b, (40u << 16) | 8, 1, 16), "");  // not 0 or 16
  EXPECT_NE(check_tcgen05_access(TmemShape::k32x32b, (48u << 16) | 8, 1, 16), "");   // 32 lanes from 48
  EXPECT_NE(check_tcgen05_access(TmemShape::k16x64b, (64u << 16), 1, 16), "");       // warp 2's lanes
  EXPECT_EQ(tcgen05_ld_st_cell(TmemShape::k16x32bx2, (16u << 16) | 4, 20, 1, 8), (TmemCell{20, 13}));
}

TEST(TensorMemory, M128AccumulatorRowIsLane) {
  const uint32_t d = 0x00000020;  // lane 0, column 32
  EXPECT_EQ(umma_m128_accumulator_cell(d, 0, 0), (TmemCell{0, 32}));
  EXPECT_EQ(umma_m128_accumulator_cell(d, 127, 255), (TmemCell{127, 287}));
  // The thread of warp w that reads row m with .32x32b is lane m - 32 w: the two rules agree.
  for (int row = 0; row < 128; ++row) {
    const int warp = row / 32;
    EXPECT_EQ(tcgen05_32x32b_cell(uint32_t(32 * warp) << 16 | 0x20, row % 32, 7), umma_m128_accumulator_cell(d, row, 7));
  }
}

}  // namespace
}  // namespace kgen::emu::test
