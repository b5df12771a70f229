// cvta.to.shared of a generic address outside the shared window: a finding, except for the
// null pointer, which CuTe converts (cast_smem_ptr_to_uint(nullptr)) and CUTLASS then asserts
// to be aligned.
#include <gtest/gtest.h>

#include "core/device.h"
#include "run_ptx.h"

namespace kgen::emu::testing {
namespace {

std::string convert(const std::string& source) {
  return std::string(kHeader) + R"(.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<2>; .reg .b64 %rd<4>;
  )" + source + R"(
  cvta.to.shared.u64 %rd2, %rd1;
  cvt.u32.u64 %r1, %rd2;
  ld.param.u64 %rd3, [out];
  st.global.u32 [%rd3], %r1;
  ret;
}
)";
}

TEST(Cvta, NullConvertsToSharedAddressZero) {
  auto* out = static_cast<uint32_t*>(Device::get().allocate(4));
  *out = 7;
  EXPECT_EQ(run_ptx(convert("mov.u64 %rd1, 0;"), "cvta_null.ptx", "k", {1, 1, 1}, {1, 1, 1}, {&out}), "");
  EXPECT_EQ(*out, 0u);
}

TEST(Cvta, AGlobalPointerIsNoSharedAddress) {
  auto* out = static_cast<uint32_t*>(Device::get().allocate(4));
  const std::string report =
      run_ptx(convert("ld.param.u64 %rd1, [out];"), "cvta_global.ptx", "k", {1, 1, 1}, {1, 1, 1}, {&out});
  EXPECT_NE(report.find("not in that state space's window"), std::string::npos) << report;
}

}  // namespace
}  // namespace kgen::emu::testing
