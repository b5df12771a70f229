// The per-thread cp.async copies (their groups, and the generic-proxy rule that makes wgmma
// need a fence.proxy.async after them) and call __assertfail, in hand-written PTX.
#include <gtest/gtest.h>

#include "core/device.h"
#include "run_ptx.h"

namespace kgen::emu::testing {
namespace {

std::string module(const std::string& body, const std::string& params = "", const std::string& globals = "") {
  return std::string(kHeader) + globals + ".extern .shared .align 1024 .b8 smem[];\n.visible .entry k(" + params +
         ")\n{\n" + body + "\n}\n";
}

// Each of 32 threads copies 16 bytes global -> shared (the second copy zero-filled past 8
// source bytes) and reads them back after WAIT.
std::string copy_kernel(const std::string& wait) {
  return module(R"(
  .reg .b32 %r<8>; .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, smem;
  mul.wide.u32 %rd1, %r1, 16;
  ld.param.u64 %rd2, [in];
  add.u64 %rd3, %rd2, %rd1;
  mad.lo.u32 %r3, %r1, 32, %r2;
  cp.async.cg.shared.global [%r3], [%rd3], 16;
  add.u32 %r4, %r3, 16;
  mov.u32 %r5, 8;
  cp.async.ca.shared.global.L2::128B [%r4], [%rd3], 16, %r5;
  cp.async.commit_group;
  )" + wait + R"(
  ld.shared.v4.u32 {%r1, %r2, %r6, %r7}, [%r4];
  ld.param.u64 %rd4, [out];
  add.u64 %rd4, %rd4, %rd1;
  st.global.v4.u32 [%rd4], {%r1, %r2, %r6, %r7};
  ret;)",
                ".param .u64 in, .param .u64 out");
}

TEST(CpAsync, WaitGroupMakesTheCopyVisibleWithZeroFill) {
  auto* in = static_cast<uint32_t*>(Device::get().allocate(512));
  auto* out = static_cast<uint32_t*>(Device::get().allocate(512));
  for (uint32_t k = 0; k < 128; ++k) in[k] = k + 1;
  EXPECT_EQ(run_ptx(copy_kernel("cp.async.wait_group 0;"), "cp_async_wait.ptx", "k", {1, 1, 1}, {32, 1, 1}, {&in, &out},
                    2048),
            "");
  for (uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(out[4 * t], 4 * t + 1);
    EXPECT_EQ(out[4 * t + 1], 4 * t + 2);
    EXPECT_EQ(out[4 * t + 2], 0u);  // past src-size: zeros
    EXPECT_EQ(out[4 * t + 3], 0u);
  }
}

TEST(CpAsync, ReadingBeforeTheWaitIsReported) {
  auto* in = static_cast<uint32_t*>(Device::get().allocate(512));
  auto* out = static_cast<uint32_t*>(Device::get().allocate(512));
  const std::string report =
      run_ptx(copy_kernel(""), "cp_async_nowait.ptx", "k", {1, 1, 1}, {32, 1, 1}, {&in, &out}, 2048);
  EXPECT_NE(report.find("while an asynchronous copy"), std::string::npos) << report;
}

TEST(CpAsync, WgmmaReadingCopiedDataWithoutAProxyFenceIsReported) {
  // cp.async writes in the generic proxy (PTX ISA, cp.async); wgmma reads in the async proxy,
  // so a fence.proxy.async must come between (PTX ISA, wgmma.fence).
  const std::string body = R"(
  .reg .b32 %r<8>; .reg .b64 %rd<6>; .reg .f32 %f<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, smem;
  mul.wide.u32 %rd1, %r1, 16;
  ld.param.u64 %rd2, [in];
  add.u64 %rd3, %rd2, %rd1;
  mad.lo.u32 %r3, %r1, 16, %r2;
  cp.async.cg.shared.global [%r3], [%rd3], 16;
  cp.async.commit_group;
  cp.async.wait_all;
  bar.sync 0;
  FENCE
  mov.b64 %rd4, 0x4000000000000040;
  mov.f32 %f1, 0f00000000; mov.f32 %f2, 0f00000000; mov.f32 %f3, 0f00000000; mov.f32 %f0, 0f00000000;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd4, %rd4, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;)";
  auto* in = static_cast<uint32_t*>(Device::get().allocate(2048));
  std::string unfenced = body;
  unfenced.replace(unfenced.find("FENCE"), 5, "");
  const std::string report = run_ptx(module(unfenced, ".param .u64 in"), "cp_async_wgmma.ptx", "k", {1, 1, 1},
                                     {128, 1, 1}, {&in}, 4096);
  EXPECT_NE(report.find("no fence.proxy.async"), std::string::npos) << report;
}

TEST(Call, AssertfailIsAFindingNamingTheAssertion) {
  const std::string globals = R"(
.extern .func __assertfail
(
.param .b64 __assertfail_param_0,
.param .b64 __assertfail_param_1,
.param .b32 __assertfail_param_2,
.param .b64 __assertfail_param_3,
.param .b64 __assertfail_param_4
)
;
.global .align 1 .b8 $str[6] = {120, 32, 62, 32, 48, 0};
.global .align 1 .b8 $str$1[5] = {97, 46, 99, 117, 0};
.global .align 1 .b8 $str$2[2] = {102, 0};
)";
  const std::string ptx = module(R"(
  .reg .b64 %rd<8>;
  mov.u64 %rd1, $str;   cvta.global.u64 %rd2, %rd1;
  mov.u64 %rd3, $str$1; cvta.global.u64 %rd4, %rd3;
  mov.u64 %rd5, $str$2; cvta.global.u64 %rd6, %rd5;
  {
  .reg .b32 temp_param_reg;
  .param .b64 param0;
  st.param.b64 [param0+0], %rd2;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd4;
  .param .b32 param2;
  st.param.b32 [param2+0], 42;
  .param .b64 param3;
  st.param.b64 [param3+0], %rd6;
  .param .b64 param4;
  st.param.b64 [param4+0], 1;
  call.uni
  __assertfail,
  (
  param0,
  param1,
  param2,
  param3,
  param4
  );
  }
  ret;)", "", globals);
  const std::string report = run_ptx(ptx, "assertfail.ptx", "k", {1, 1, 1}, {1, 1, 1}, {});
  EXPECT_NE(report.find("device-side assert failed: a.cu:42: f: Assertion `x > 0` failed"), std::string::npos) << report;
}

TEST(Call, VprintfPrintsEachThreadsLine) {
  const std::string globals = R"(
.extern .func (.param .b32 func_retval0) vprintf
(
.param .b64 vprintf_param_0,
.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[18] = {116, 61, 37, 100, 32, 37, 115, 32, 37, 46, 49, 102, 32, 37, 108, 108, 100, 0};
.global .align 1 .b8 $str$1[3] = {111, 107, 0};
)";  // "t=%d %s %.1f %lld", "ok"
  const std::string ptx = module(R"(
  .local .align 8 .b8 depot[32];
  .reg .b32 %r<4>; .reg .b64 %rd<10>; .reg .f64 %fd<2>;
  mov.u64 %rd1, depot;
  cvta.local.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  st.local.u32 [%rd1], %r1;
  mov.u64 %rd3, $str$1;
  cvta.global.u64 %rd4, %rd3;
  st.local.u64 [%rd1+8], %rd4;
  mov.f64 %fd1, 0d3FF8000000000000;
  st.local.f64 [%rd1+16], %fd1;
  mov.u64 %rd5, -5;
  st.local.u64 [%rd1+24], %rd5;
  mov.u64 %rd6, $str;
  cvta.global.u64 %rd7, %rd6;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd7;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd2;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r2, [retval0+0];
  }
  ret;)", "", globals);
  ::testing::internal::CaptureStdout();
  const std::string report = run_ptx(ptx, "vprintf.ptx", "k", {1, 1, 1}, {2, 1, 1}, {});
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(report, "");
  EXPECT_EQ(printed, "t=0 ok 1.5 -5t=1 ok 1.5 -5");
}

}  // namespace
}  // namespace kgen::emu::testing
