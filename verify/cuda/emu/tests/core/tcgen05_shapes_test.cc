// tcgen05.st and tcgen05.ld in every data-movement shape on the emulator: a warp stores with one
// shape and reads back with .32x32b (and with the same shape), and each value sits where
// tensor/umma.h's tcgen05_ld_st_cell (proven against CuTe in tests/tensor) puts it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/device.h"
#include "run_ptx.h"
#include "tensor/umma.h"

namespace kgen::emu::testing {
namespace {

struct ShapeCase {
  const char* name;
  TmemShape shape;
  uint32_t split;  // immHalfSplitoff for .16x32bx2
};

std::string vector_of(const char* prefix, uint32_t n) {
  std::string s = "{";
  for (uint32_t k = 0; k < n; ++k) s += (k ? ", %" : "%") + std::string(prefix) + std::to_string(k);
  return s + "}";
}

// Warp 0 stores value 1000 lane + reg with `c` (.x2) at lane `base_lane`, column 0, then loads
// columns 0..15 of its 32 lanes with .32x32b.x16 into out[lane * 16 ..] and the same shape back
// into out[512 + lane * regs ..].
std::string kernel(const ShapeCase& c, uint32_t regs, uint32_t base_lane) {
  const std::string split = c.shape == TmemShape::k16x32bx2 ? ", " + std::to_string(c.split) : "";
  std::string body = R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b32 %s<64>; .reg .b32 %v<16>; .reg .b32 %w<64>; .reg .b64 %rd<8>;
  mov.u32 %r1, smem;
  mov.u32 %r2, %tid.x;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
  ld.shared.b32 %r3, [%r1];
  mul.lo.u32 %r4, %r2, 1000;
)";
  for (uint32_t k = 0; k < regs; ++k) body += "  add.u32 %s" + std::to_string(k) + ", %r4, " + std::to_string(k) + ";\n";
  body += "  add.u32 %r5, %r3, " + std::to_string(base_lane << 16) + ";\n";
  body += "  tcgen05.st.sync.aligned." + std::string(c.name) + ".x2.b32 [%r5]" + split + ", " + vector_of("s", regs) + ";\n";
  body += "  tcgen05.wait::st.sync.aligned;\n";
  body += "  tcgen05.ld.sync.aligned.32x32b.x16.b32 " + vector_of("v", 16) + ", [%r3];\n";
  body += "  tcgen05.ld.sync.aligned." + std::string(c.name) + ".x2.b32 " + vector_of("w", regs) + ", [%r5]" + split + ";\n";
  body += R"(  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 64;
  add.s64 %rd3, %rd1, %rd2;
)";
  for (int k = 0; k < 16; ++k) body += "  st.global.b32 [%rd3+" + std::to_string(4 * k) + "], %v" + std::to_string(k) + ";\n";
  body += "  mul.wide.u32 %rd4, %r2, " + std::to_string(4 * regs) + ";\n  add.s64 %rd5, %rd1, %rd4;\n";
  for (uint32_t k = 0; k < regs; ++k)
    body += "  st.global.b32 [%rd5+" + std::to_string(2048 + 4 * k) + "], %w" + std::to_string(k) + ";\n";
  body += R"(  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;
  ret;
}
)";
  return body;
}

const ShapeCase kCases[] = {
    {"32x32b", TmemShape::k32x32b, 0},     {"16x64b", TmemShape::k16x64b, 0},     {"16x128b", TmemShape::k16x128b, 0},
    {"16x256b", TmemShape::k16x256b, 0},   {"16x32bx2", TmemShape::k16x32bx2, 4},
};

TEST(Tcgen05Shapes, EveryShapeStoresAndLoadsTheCellsOfItsLayout) {
  for (const ShapeCase& c : kCases)
    for (uint32_t base_lane : {0u, 16u}) {
      if (c.shape == TmemShape::k32x32b && base_lane) continue;
      const uint32_t regs = tcgen05_registers(c.shape, 2);
      uint32_t* out = static_cast<uint32_t*>(Device::get().allocate(2048 + 32 * 4 * regs));
      const std::string origin = std::string("tcgen05_shape_") + c.name + "_" + std::to_string(base_lane) + ".ptx";
      ASSERT_EQ(run_ptx(kernel(c, regs, base_lane), origin, "k", {1, 1, 1}, {32, 1, 1}, {&out}, 64), "") << c.name;
      std::vector<uint32_t> expected(32 * 16, 0xffffffffu);  // unwritten cells read as NaN
      for (int lane = 0; lane < 32; ++lane)
        for (uint32_t r = 0; r < regs; ++r) {
          const TmemCell cell = tcgen05_ld_st_cell(c.shape, base_lane << 16, lane, static_cast<int>(r), c.split);
          ASSERT_LT(cell.column, 16u);
          expected[cell.lane * 16 + cell.column] = 1000u * static_cast<uint32_t>(lane) + r;
        }
      for (uint32_t k = 0; k < 32 * 16; ++k) EXPECT_EQ(out[k], expected[k]) << c.name << " lane " << k / 16 << " column " << k % 16;
      for (uint32_t k = 0; k < 32 * regs; ++k) EXPECT_EQ(out[512 + k], 1000 * (k / regs) + k % regs) << c.name << " round trip";
      Device::get().release(out);
    }
}

}  // namespace
}  // namespace kgen::emu::testing
