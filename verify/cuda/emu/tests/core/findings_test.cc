// Every checker of the core has a planted bug here that it must report: hazards that a GPU
// would turn into silent wrong results or hangs.
#include <gtest/gtest.h>

#include <cstring>

#include "core/device.h"
#include "run_ptx.h"

namespace kgen::emu::testing {
namespace {

std::string module(const std::string& body, const std::string& params = "", const std::string& globals = "") {
  return std::string(kHeader) + globals + ".visible .entry k(" + params + ")\n{\n" + body + "\n}\n";
}

// Shared prologue: %r1 = shared address of the dynamic array (1 KiB aligned).
const char* kSmem = ".extern .shared .align 1024 .b8 smem[];\n";

TEST(Findings, MbarrierNobodyArrivesOnIsADeadlockReport) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>; .reg .pred %p<2>;
  mov.u32 %r1, smem;
  mbarrier.init.shared::cta.b64 [%r1], 2;
  mbarrier.arrive.shared::cta.b64 _, [%r1];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
  @!%p1 bra WAIT;
  ret;)", "", kSmem);
  const std::string report = run_ptx(ptx, "deadlock.ptx", "k", {1, 1, 1}, {1, 1, 1}, {}, 64);
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("spins on the mbarrier"), std::string::npos) << report;
  EXPECT_NE(report.find("1 arrivals"), std::string::npos) << report;
}

TEST(Findings, TheSameKernelWithBothArrivalsCompletes) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>; .reg .pred %p<2>;
  mov.u32 %r1, smem;
  mbarrier.init.shared::cta.b64 [%r1], 2;
  mbarrier.arrive.shared::cta.b64 _, [%r1];
  mbarrier.arrive.shared::cta.b64 _, [%r1];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
  @!%p1 bra WAIT;
  ret;)", "", kSmem);
  // One thread: two arrivals of a single lane.
  EXPECT_EQ(run_ptx(ptx, "arrivals.ptx", "k", {1, 1, 1}, {1, 1, 1}, {}, 64), "");
}

TEST(Findings, OverArrivalIsReported) {
  // An arrival count larger than the arrivals the phase still expects.
  const std::string ptx = module(R"(
  .reg .b32 %r<4>;
  mov.u32 %r1, smem;
  mbarrier.init.shared::cta.b64 [%r1], 2;
  mov.u32 %r2, 3;
  mbarrier.arrive.shared::cta.b64 _, [%r1], %r2;
  ret;)", "", kSmem);
  const std::string report = run_ptx(ptx, "over.ptx", "k", {1, 1, 1}, {1, 1, 1}, {}, 64);
  EXPECT_NE(report.find("over-arrival"), std::string::npos) << report;
}

TEST(Findings, GenericAccessToAnMbarrierIsReported) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>;
  mov.u32 %r1, smem;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  st.shared.u32 [%r1+4], 0;
  ret;)", "", kSmem);
  const std::string report = run_ptx(ptx, "mbarrier_store.ptx", "k", {1, 1, 1}, {1, 1, 1}, {}, 64);
  EXPECT_NE(report.find("mbarrier object"), std::string::npos) << report;
}

TEST(Findings, BarrierCountDisagreementIsReported) {
  // Warp 0 syncs 64 threads on barrier 1, warp 1 syncs 128 on it.
  const std::string ptx = module(R"(
  .reg .b32 %r<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra FIRST;
  bar.sync 1, 128;
  ret;
FIRST:
  bar.sync 1, 64;
  ret;)");
  const std::string report = run_ptx(ptx, "bar_count.ptx", "k", {1, 1, 1}, {64, 1, 1}, {});
  EXPECT_NE(report.find("expects"), std::string::npos) << report;
}

TEST(Findings, ABarrierSomeWarpsNeverReachIsADeadlock) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra DONE;
  bar.sync 1, 128;
DONE:
  ret;)");
  const std::string report = run_ptx(ptx, "bar_deadlock.ptx", "k", {1, 1, 1}, {128, 1, 1}, {});
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("waits at barrier 1 (96 of 128 threads arrived)"), std::string::npos) << report;
}

TEST(Findings, SharedAccessPastTheCtaIsReported) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>;
  mov.u32 %r1, smem;
  st.shared.u32 [%r1+64], 1;
  ret;)", "", kSmem);
  const std::string report = run_ptx(ptx, "smem_oob.ptx", "k", {1, 1, 1}, {1, 1, 1}, {}, 64);
  EXPECT_NE(report.find("outside the CTA's 64 bytes of shared memory"), std::string::npos) << report;
}

TEST(Findings, GlobalAccessOutsideEveryAllocationIsReported) {
  const std::string ptx = module(R"(
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1+256], 1;
  ret;)", ".param .u64 p");
  void* buffer = Device::get().allocate(256);
  const std::string report = run_ptx(ptx, "global_oob.ptx", "k", {1, 1, 1}, {1, 1, 1}, {&buffer});
  EXPECT_NE(report.find("outside every allocation"), std::string::npos) << report;
  Device::get().release(buffer);
}

TEST(Findings, AnUnimplementedInstructionNamesItsOpcodeAndLine) {
  const std::string ptx = module(R"(
  .reg .b32 %r<4>;
  mov.u32 %r1, 1;
  bogus.op.b32 %r2, %r1;
  ret;)");
  const std::string report = run_ptx(ptx, "bogus.ptx", "k", {1, 1, 1}, {1, 1, 1}, {});
  EXPECT_NE(report.find("bogus.ptx:9: instruction 'bogus.op.b32' is not implemented"), std::string::npos) << report;
}

TEST(Findings, ShflWithMembersElsewhereIsReported) {
  const std::string ptx = module(R"(
  .reg .b32 %r<6>; .reg .pred %p<2>;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra SKIP;
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
SKIP:
  ret;)");
  const std::string report = run_ptx(ptx, "shfl_diverged.ptx", "k", {1, 1, 1}, {32, 1, 1}, {});
  EXPECT_NE(report.find("membermask 0xffffffff"), std::string::npos) << report;
}

// A wgmma of zeros: correct with its wait, reported when the accumulator is read first.
std::string wgmma_kernel(bool wait) {
  return module(std::string(R"(
  .reg .b32 %r<8>; .reg .b64 %rd<6>; .reg .f32 %f<8>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, smem;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  st.shared.v4.u32 [%r4], {0, 0, 0, 0};
  fence.proxy.async.shared::cta;
  bar.sync 0;
  shr.u32 %r5, %r2, 4;
  cvt.u64.u32 %rd1, %r5;
  or.b64 %rd2, %rd1, 0x0000000800000000;
  or.b64 %rd2, %rd2, 0x0000000000080000;
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0f3F800000;
  mov.f32 %f3, 0f3F800000;
  mov.f32 %f4, 0f3F800000;
  setp.ne.b32 %p1, 1, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd2, %rd2, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
)") + (wait ? "  wgmma.wait_group.sync.aligned 0;\n" : "") + R"(
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.f32 [%rd5], %f1;
  wgmma.wait_group.sync.aligned 0;
  ret;)", ".param .u64 out", kSmem);
}

TEST(Findings, AccumulatorReadBeforeWgmmaWaitIsReported) {
  float* out = static_cast<float*>(Device::get().allocate(128 * 4));
  void* arg = out;
  const std::string report = run_ptx(wgmma_kernel(false), "wgmma_nowait.ptx", "k", {1, 1, 1}, {128, 1, 1}, {&arg}, 2048);
  EXPECT_NE(report.find("still writes it: a missing wait"), std::string::npos) << report;
  EXPECT_EQ(run_ptx(wgmma_kernel(true), "wgmma_wait.ptx", "k", {1, 1, 1}, {128, 1, 1}, {&arg}, 2048), "");
  // A and B are zero: D = 0 + the accumulator's 1.0.
  for (int t = 0; t < 128; ++t) EXPECT_EQ(out[t], 1.0f) << t;
  Device::get().release(out);
}

}  // namespace
}  // namespace kgen::emu::testing
