// tcgen05 on the emulator: a 128 x 16 x 16 bf16 product through tensor memory gives the right
// numbers, and each of its hazards, planted into the same kernel, is reported.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device.h"
#include "run_ptx.h"
#include "tcgen05_product.h"

namespace kgen::emu::testing {
namespace {

// The defects a kernel variant plants (all false: a correct kernel).
struct Plant {
  bool no_wait = false;          // the readers skip the commit's mbarrier (which also expects 2 arrivals)
  bool no_wait_ld = false;       // the readers never issue tcgen05.wait::ld before the dealloc hand-off
  bool late_wait_ld = false;     // the readers use the tcgen05.ld registers first, then tcgen05.wait::ld
  bool wrong_quarter = false;    // warp w loads lanes of warp w + 1's quarter
  bool no_dealloc = false;       // the CTA exits holding its columns
  bool over_allocate = false;    // warp 0 allocates 512 columns and then 32 more
  bool no_after_fence = false;   // the readers skip tcgen05.fence::after_thread_sync after the wait
  bool no_before_fence = false;  // the readers skip tcgen05.fence::before_thread_sync before the final barrier
  // The readers' hand-offs synchronize without release/acquire (try_wait.relaxed, a relaxed
  // cluster-barrier arrival instead of the final bar.sync): only the tcgen05 fences order them.
  bool relaxed = false;
  bool no_proxy_fence = false;   // the operands' generic stores are not published by fence.proxy.async
};

constexpr uint32_t kSlot = kABytes + kBBytes;  // the allocated address
constexpr uint32_t kMbar = kSlot + 8;

std::string kernel(const Plant& p) {
  std::string regs = "{";
  for (int j = 0; j < kN; ++j) regs += (j ? ", %v" : "%v") + std::to_string(j);
  regs += "}";
  std::string stores;
  for (int j = 0; j < kN; ++j) stores += "  st.global.b32 [%rd9+" + std::to_string(4 * j) + "], %v" + std::to_string(j) + ";\n";
  std::string s = R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 desc_a, .param .u64 desc_b, .param .u32 idesc)
{
  .reg .b32 %r<40>; .reg .b32 %v<16>; .reg .b64 %rd<16>; .reg .pred %p<8>;
  mov.u32 %r1, smem;
  mov.u32 %r2, %tid.x;
  shr.u32 %r3, %r2, 5;
  ld.param.u64 %rd1, [in];
  // Copy the operands (in the canonical layout already) into shared memory: 4 bytes a thread a step.
  mov.u32 %r4, %r2;
COPY:
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.b32 %r5, [%rd3];
  shl.b32 %r6, %r4, 2;
  add.u32 %r7, %r1, %r6;
  st.shared.b32 [%r7], %r5;
  add.u32 %r4, %r4, 128;
  setp.lt.u32 %p1, %r4, )" + std::to_string(kSlot / 4) + R"(;
  @%p1 bra COPY;
)" + (p.no_proxy_fence ? "" : "  fence.proxy.async.shared::cta;\n") + R"(
  add.u32 %r8, %r1, )" + std::to_string(kSlot) + R"(;
  add.u32 %r9, %r1, )" + std::to_string(kMbar) + R"(;
  setp.eq.u32 %p2, %r2, 0;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra ALLOCATED;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r8], )" + (p.over_allocate ? "512" : "32") + R"(;
)" + (p.over_allocate ? "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r8], 32;\n" : "") + R"(
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
  @%p2 mbarrier.init.shared::cta.b64 [%r9], )" + (p.no_wait ? "2" : "1") + R"(;
  fence.mbarrier_init.release.cluster;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r10, [%r8];
  @!%p2 bra WAIT;
  // Thread 0 issues D = A B^T and commits it to the mbarrier.
  )" + issue_and_commit_ptx("%r9") + R"(WAIT:
)" + (p.no_wait ? "" : std::string("  mbarrier.try_wait.parity") + (p.relaxed ? ".relaxed.cluster" : "") + R"(.shared::cta.b64 %p4, [%r9], 0;
  @!%p4 bra WAIT;
)") + (p.no_after_fence ? "" : "  tcgen05.fence::after_thread_sync;\n") + R"(
  // Warp w reads its lane quarter: lanes 32 w .. 32 w + 31, columns 0 .. 15.
  )" + (p.wrong_quarter ? "add.u32 %r15, %r3, 1;\n  and.b32 %r15, %r15, 3;" : "mov.u32 %r15, %r3;") + R"(
  shl.b32 %r16, %r15, 21;
  add.u32 %r17, %r10, %r16;
  tcgen05.ld.sync.aligned.32x32b.x16.b32 )" + regs + R"(, [%r17];
)" + (p.no_wait_ld || p.late_wait_ld ? "" : "  tcgen05.wait::ld.sync.aligned;\n") + R"(
  ld.param.u64 %rd8, [out];
  mul.wide.u32 %rd10, %r2, )" + std::to_string(4 * kN) + R"(;
  add.s64 %rd9, %rd8, %rd10;
)" + stores + (p.late_wait_ld ? "  tcgen05.wait::ld.sync.aligned;\n" : "") + (p.no_before_fence ? "" : "  tcgen05.fence::before_thread_sync;\n") +
         (p.relaxed ? "  barrier.cluster.arrive.relaxed.aligned;\n  barrier.cluster.wait.aligned;\n" : "  bar.sync 0;\n") + R"(
  @%p3 bra DONE;
  tcgen05.fence::after_thread_sync;
)" + (p.no_dealloc ? "" : "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 32;\n") + R"(
DONE:
  ret;
}
)";
  return s;
}

struct Result {
  std::string report;
  std::vector<float> out;
  std::vector<float> expected;
};

Result run(const Plant& p, const std::string& origin) {
  Tcgen05Product product;
  void* in = Device::get().allocate(kSlot);
  std::memcpy(in, product.operands.data(), kSlot);
  void* out = Device::get().allocate(kM * kN * 4);
  Result r;
  r.report = run_ptx(kernel(p), origin, "k", {1, 1, 1}, {128, 1, 1},
                     {&in, &out, &product.desc_a, &product.desc_b, &product.idesc}, kMbar + 8);
  r.out.assign(static_cast<float*>(out), static_cast<float*>(out) + kM * kN);
  r.expected = product.expected();
  Device::get().release(in);
  Device::get().release(out);
  return r;
}

void expect_report(const Result& r, const std::string& text) {
  EXPECT_NE(r.report.find(text), std::string::npos) << r.report;
}

TEST(Tcgen05, MmaCommitWaitLoadGivesTheProduct) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Device::get().options().seed = seed;
    const Result r = run(Plant{}, "tcgen05_ok_" + std::to_string(seed) + ".ptx");
    ASSERT_EQ(r.report, "");
    for (int i = 0; i < kM * kN; ++i) ASSERT_EQ(r.out[i], r.expected[i]) << "row " << i / kN << " column " << i % kN;
  }
  Device::get().options().seed = 1;
}

TEST(Tcgen05, LoadBeforeTheCommitsPhaseCompletedIsReported) {
  Plant p;
  p.no_wait = true;
  const Result r = run(p, "tcgen05_no_wait.ptx");
  expect_report(r, "tcgen05.ld of tensor memory");
  expect_report(r, "tcgen05.commit");
}

// PTX ISA 9.7.16.6.4.5: a true register dependency on a tcgen05.ld is respected without a wait.
TEST(Tcgen05, RegistersOfALoadMayBeReadBeforeWaitLd) {
  Plant p;
  p.late_wait_ld = true;
  const Result r = run(p, "tcgen05_late_wait_ld.ptx");
  ASSERT_EQ(r.report, "");
  for (int i = 0; i < kM * kN; ++i) ASSERT_EQ(r.out[i], r.expected[i]) << "row " << i / kN << " column " << i % kN;
}

// ... but only tcgen05.wait::ld orders the load's read of tensor memory before a later write:
// here the dealloc after the hand-off.
TEST(Tcgen05, AWriteOfCellsALoadStillReadsIsReported) {
  Plant p;
  p.no_wait_ld = true;
  const Result r = run(p, "tcgen05_no_wait_ld.ptx");
  expect_report(r, "tcgen05.dealloc of tensor memory");
  expect_report(r, "has not waited for with tcgen05.wait::ld");
}

// Writing a destination register of a tcgen05.ld before its wait::ld (the load may land later).
TEST(Tcgen05, OverwritingALoadsRegisterBeforeWaitLdIsReported) {
  const std::string ptx = R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k()
{
  .reg .b32 %r<8>; .reg .pred %p<4>;
  mov.u32 %r1, smem;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
  ld.shared.b32 %r2, [%r1];
  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r2};
  tcgen05.wait::st.sync.aligned;
  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r2];
  mov.u32 %r3, 7;
  tcgen05.wait::ld.sync.aligned;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
  ret;
}
)";
  const std::string report = run_ptx(ptx, "tcgen05_ld_waw.ptx", "k", {1, 1, 1}, {32, 1, 1}, {}, 64);
  EXPECT_NE(report.find("writes register %r3 while an asynchronous operation"), std::string::npos) << report;
}

TEST(Tcgen05, AWarpOutsideItsLaneQuarterIsReported) {
  Plant p;
  p.wrong_quarter = true;
  expect_report(run(p, "tcgen05_quarter.ptx"), "may access lanes");
}

TEST(Tcgen05, ExitHoldingTensorMemoryIsReported) {
  Plant p;
  p.no_dealloc = true;
  expect_report(run(p, "tcgen05_no_dealloc.ptx"), "exits holding 32 columns of tensor memory");
}

TEST(Tcgen05, AnAllocationThatCanNeverSucceedIsADeadlock) {
  Plant p;
  p.over_allocate = true;
  expect_report(run(p, "tcgen05_over_allocate.ptx"), "deadlock: tcgen05.alloc of 32 columns can never succeed");
}

TEST(Tcgen05, AHandOffWithoutAfterThreadSyncIsReported) {
  Plant p;
  p.no_after_fence = true;
  p.relaxed = true;
  expect_report(run(p, "tcgen05_no_after_fence.ptx"), "with no tcgen05.fence::after_thread_sync by this warp");
}

TEST(Tcgen05, AHandOffWithoutBeforeThreadSyncIsReported) {
  Plant p;
  p.no_before_fence = true;
  p.relaxed = true;
  const Result r = run(p, "tcgen05_no_before_fence.ptx");
  expect_report(r, "tcgen05.dealloc");
  expect_report(r, "issued no tcgen05.fence::before_thread_sync");
}

// The same kernel with relaxed synchronization and both fences is clean; with release/acquire
// synchronization (the default mbarrier semantics, bar.sync) it needs no tcgen05 fence at all:
// "the standard memory consistency model synchronization mechanisms also apply" (9.7.16.6.3).
TEST(Tcgen05, FencesOrderRelaxedHandOffsAndReleaseAcquireOrdersTheRest) {
  Plant relaxed;
  relaxed.relaxed = true;
  Result r = run(relaxed, "tcgen05_relaxed_fenced.ptx");
  ASSERT_EQ(r.report, "");
  for (int i = 0; i < kM * kN; ++i) ASSERT_EQ(r.out[i], r.expected[i]) << i;
  Plant unfenced;
  unfenced.no_after_fence = unfenced.no_before_fence = true;
  r = run(unfenced, "tcgen05_acquire_release_unfenced.ptx");
  ASSERT_EQ(r.report, "");
  for (int i = 0; i < kM * kN; ++i) ASSERT_EQ(r.out[i], r.expected[i]) << i;
}

TEST(Tcgen05, OperandsWrittenWithoutFenceProxyAsyncAreReported) {
  Plant p;
  p.no_proxy_fence = true;
  expect_report(run(p, "tcgen05_no_proxy_fence.ptx"), "with no fence.proxy.async since");
}

// Two warps each hold 512 columns' worth of requests: the second blocks forever.
TEST(Tcgen05, TwoWarpsThatEachWaitForTheOthersColumnsDeadlock) {
  const std::string ptx = R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k()
{
  .reg .b32 %r<8>; .reg .pred %p<4>;
  mov.u32 %r1, smem;
  mov.u32 %r2, %tid.x;
  shr.u32 %r3, %r2, 5;
  shl.b32 %r4, %r3, 3;
  add.u32 %r5, %r1, %r4;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r5], 512;
  bar.sync 0;
  ld.shared.b32 %r6, [%r5];
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 512;
  ret;
}
)";
  const std::string report = run_ptx(ptx, "tcgen05_two_warps.ptx", "k", {1, 1, 1}, {64, 1, 1}, {}, 64);
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("tcgen05.alloc"), std::string::npos) << report;
}

}  // namespace
}  // namespace kgen::emu::testing
