// sm_100a's packed f32 arithmetic (add/sub/mul/fma .f32x2 on a .b64 register, as CUTLASS's
// Blackwell FMHA softmax emits it): each half is its own f32 operation with its own rounding,
// so a carry or a NaN in one half never reaches the other.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "core/device.h"
#include "run_ptx.h"

namespace kgen::emu::testing {
namespace {

uint64_t pack(float low, float high) {
  return uint64_t{std::bit_cast<uint32_t>(low)} | uint64_t{std::bit_cast<uint32_t>(high)} << 32;
}

// Runs `op` (an instruction writing %rd4 from %rd1..%rd3) on one thread; returns %rd4.
uint64_t run(const std::string& op, const std::string& origin, uint64_t a, uint64_t b, uint64_t c) {
  const std::string ptx = std::string(".version 9.0\n.target sm_100a\n.address_size 64\n") +
                          R"(.visible .entry k(.param .u64 io)
{
  .reg .b64 %rd<6>;
  ld.param.u64 %rd5, [io];
  ld.global.u64 %rd1, [%rd5];
  ld.global.u64 %rd2, [%rd5+8];
  ld.global.u64 %rd3, [%rd5+16];
  )" + op + R"(
  st.global.u64 [%rd5+24], %rd4;
  ret;
}
)";
  auto* io = static_cast<uint64_t*>(Device::get().allocate(32));
  io[0] = a, io[1] = b, io[2] = c, io[3] = 0;
  const std::string report = run_ptx(ptx, origin, "k", {1, 1, 1}, {1, 1, 1}, {&io});
  EXPECT_EQ(report, "");
  return io[3];
}

TEST(PackedF32, AddMulFmaWorkOnEachHalf) {
  EXPECT_EQ(run("add.f32x2 %rd4, %rd1, %rd2;", "f32x2_add.ptx", pack(1.5f, -2.0f), pack(0.25f, 8.0f), 0),
            pack(1.75f, 6.0f));
  EXPECT_EQ(run("sub.rn.f32x2 %rd4, %rd1, %rd2;", "f32x2_sub.ptx", pack(1.5f, -2.0f), pack(0.25f, 8.0f), 0),
            pack(1.25f, -10.0f));
  EXPECT_EQ(run("mul.f32x2 %rd4, %rd1, %rd2;", "f32x2_mul.ptx", pack(3.0f, -0.5f), pack(0.5f, 6.0f), 0),
            pack(1.5f, -3.0f));
  EXPECT_EQ(run("fma.rn.f32x2 %rd4, %rd1, %rd2, %rd3;", "f32x2_fma.ptx", pack(2.0f, 3.0f), pack(4.0f, -1.0f),
                pack(1.0f, 0.5f)),
            pack(9.0f, -2.5f));
}

TEST(PackedF32, FmaRoundsOnceAndHalvesStayApart) {
  // 1 + 2^-23 squared is 1 + 2^-22 + 2^-46: fma minus 1 + 2^-22 keeps 2^-46, a mul then a sub
  // would lose it. The high half's NaN must not disturb the low half.
  const float e = 1.0f + 0x1p-23f;
  const uint64_t r = run("fma.rn.f32x2 %rd4, %rd1, %rd2, %rd3;", "f32x2_fma_once.ptx",
                         pack(e, std::nanf("")), pack(e, 1.0f), pack(-(1.0f + 0x1p-22f), 0.0f));
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(r)), 0x1p-46f);
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(static_cast<uint32_t>(r >> 32))));
}

TEST(PackedF32, OtherOperationsAreRefusedByName) {
  const std::string ptx = std::string(".version 9.0\n.target sm_100a\n.address_size 64\n") +
                          ".visible .entry k()\n{\n  .reg .b64 %rd<3>;\n  mov.b64 %rd1, 0;\n"
                          "  max.f32x2 %rd2, %rd1, %rd1;\n  ret;\n}\n";
  const std::string report = run_ptx(ptx, "f32x2_max.ptx", "k", {1, 1, 1}, {1, 1, 1}, {});
  EXPECT_NE(report.find("f32x2 other than add, sub, mul, fma"), std::string::npos) << report;
}

}  // namespace
}  // namespace kgen::emu::testing
