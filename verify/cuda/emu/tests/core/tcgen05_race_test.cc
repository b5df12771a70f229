// The race check (core/races.h) across the tensor core and the copy engine: a stage the tensor
// core read, refilled by a copy whose issuer never waited for the tcgen05.commit that
// publishes the read; operands a warp wrote, read by a tcgen05.mma whose issuer never
// synchronized with that warp; a stage refilled while its last copy is still in flight. Each
// is planted into a kernel whose correct form passes. The unsynchronized hand-offs use a
// relaxed atomic flag, which orders nothing under the PTX memory model: the hazard is then
// certain to be in place (the product done, the operands written) when the access comes, as
// on a GPU where the timing happened to let it pass.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/device.h"
#include "run_ptx.h"
#include "tcgen05_product.h"

namespace kgen::emu::testing {
namespace {

constexpr uint32_t kStage = kABytes + kBBytes;  // A then B, one copy
constexpr uint32_t kSlot = kStage;              // the allocated tensor-memory address
constexpr uint32_t kFlag = kStage + 4;          // the relaxed flag
constexpr uint32_t kFull = kStage + 8;          // the copies' (or the writers') mbarrier
constexpr uint32_t kEmpty = kStage + 16;        // the commit's mbarrier
constexpr uint32_t kSpare = kStage + 24;        // a second commit's mbarrier
constexpr uint32_t kShared = kStage + 32;

// How the kernel's two warps hand the stage over (all false: the correct kernel).
struct Plant {
  // Warp 1 refills the stage once warp 0 raised the flag (after its own wait for the commit)
  // instead of waiting for the commit's mbarrier itself.
  bool refill_after_flag = false;
  // Warp 1 issues the refill right after the first copy, before that copy landed.
  bool refill_before_landing = false;
  // With operands_by_stores: the MMA thread issues once warp 1 raised the flag instead of
  // waiting for warp 1's arrival.
  bool mma_after_flag = false;
  bool operands_by_stores = false;  // warp 1 stores the operands instead of copying them
  // Warp 1 waits for its copy itself and raises the flag; the MMA thread issues once it sees
  // the flag instead of waiting for the copy's mbarrier.
  bool mma_after_landing_flag = false;
  // The MMA thread commits to kEmpty, then to kSpare; warp 0 waits for kSpare's phase ...
  bool two_commits = false;
  // ... and for kEmpty's too (else nobody waits for the first commit's arrival).
  bool wait_both_commits = false;
};

std::string wait_loop(const std::string& label, const std::string& barrier, int parity, const std::string& pred) {
  return label + ":\n  mbarrier.try_wait.parity.shared::cta.b64 " + pred + ", [" + barrier + "], " +
         std::to_string(parity) + ";\n  @!" + pred + " bra " + label + ";\n";
}

std::string spin_on_flag(const std::string& label) {
  return label + ":\n  atom.shared.or.b32 %r23, [%r21], 0;\n  setp.eq.u32 %p7, %r23, 0;\n  @%p7 bra " + label + ";\n";
}

// Warp 0 allocates tensor memory, thread 0 issues D = A B^T once the operands are in and
// commits it to kEmpty; the whole warp waits for the commit, raises the flag and frees the
// columns. Warp 1 brings the operands: by one bulk copy completing kFull, then refills the
// stage after the product (a second copy), or by stores and an arrival on kFull.
std::string kernel(const Plant& p) {
  const bool by_stores = p.operands_by_stores;
  std::string s = R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 in, .param .u64 desc_a, .param .u64 desc_b, .param .u32 idesc)
{
  .reg .b32 %r<40>; .reg .b64 %rd<16>; .reg .pred %p<8>;
  mov.u32 %r1, smem;
  mov.u32 %r2, %tid.x;
  shr.u32 %r3, %r2, 5;
  add.u32 %r8, %r1, )" + std::to_string(kSlot) + R"(;
  add.u32 %r9, %r1, )" + std::to_string(kFull) + R"(;
  add.u32 %r20, %r1, )" + std::to_string(kEmpty) + R"(;
  add.u32 %r21, %r1, )" + std::to_string(kFlag) + R"(;
  add.u32 %r24, %r1, )" + std::to_string(kSpare) + R"(;
  ld.param.u64 %rd1, [in];
  setp.eq.u32 %p2, %r2, 0;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra ALLOCATED;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r8], 32;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  @%p2 mbarrier.init.shared::cta.b64 [%r9], 1;
  @%p2 mbarrier.init.shared::cta.b64 [%r20], 1;
  @%p2 mbarrier.init.shared::cta.b64 [%r24], 1;
  @%p2 st.shared.u32 [%r21], 0;
  fence.mbarrier_init.release.cluster;
ALLOCATED:
  bar.sync 0;
  ld.shared.b32 %r10, [%r8];
  @%p3 bra OPERANDS;
  @!%p2 bra DRAIN;
)" + (p.mma_after_flag || p.mma_after_landing_flag ? spin_on_flag("OPERANDS_IN") : wait_loop("OPERANDS_IN", "%r9", 0, "%p4")) + R"(
)" + issue_and_commit_ptx("%r20") + R"()" + (p.two_commits ? "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r24];\n" : "") + R"(
DRAIN:
)" + (p.two_commits ? wait_loop("PRODUCT_DONE", "%r24", 0, "%p5") + (p.wait_both_commits ? wait_loop("FIRST_DONE", "%r20", 0, "%p5") : "")
                    : wait_loop("PRODUCT_DONE", "%r20", 0, "%p5")) + R"(
)" + (by_stores ? "" : "  @%p2 atom.shared.exch.b32 %r22, [%r21], 1;\n") + R"(
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r10, 32;
  bra.uni DONE;
OPERANDS:
)";
  if (by_stores) {
    // Warp 1's 32 threads store the operands, publish them to the async proxy and hand them over.
    s += R"(  and.b32 %r4, %r2, 31;
COPY:
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.b32 %r5, [%rd3];
  shl.b32 %r6, %r4, 2;
  add.u32 %r7, %r1, %r6;
  st.shared.b32 [%r7], %r5;
  add.u32 %r4, %r4, 32;
  setp.lt.u32 %p1, %r4, )" + std::to_string(kStage / 4) + R"(;
  @%p1 bra COPY;
  fence.proxy.async.shared::cta;
  bar.warp.sync -1;
  setp.eq.u32 %p6, %r2, 32;
)" + (p.mma_after_flag ? "  @%p6 atom.shared.exch.b32 %r22, [%r21], 1;\n"
                       : "  @%p6 mbarrier.arrive.shared::cta.b64 %rd9, [%r9];\n") + R"(
  bra.uni DONE;
)";
  } else {
    const std::string copy = "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], " +
                             std::to_string(kStage) + ", [%r9];\n";
    auto expect = [](uint32_t bytes) {
      return "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd9, [%r9], " + std::to_string(bytes) + ";\n";
    };
    s += "  setp.eq.u32 %p6, %r2, 32;\n  @!%p6 bra DONE;\n";
    if (p.refill_before_landing) {  // both copies in the first phase
      s += expect(2 * kStage) + copy + copy;
    } else if (p.mma_after_landing_flag) {  // no refill: warp 1 waits for its copy, raises the flag
      s += expect(kStage) + copy + wait_loop("LANDED", "%r9", 0, "%p4") + "  atom.shared.exch.b32 %r22, [%r21], 1;\n";
    } else if (p.two_commits) {  // no refill: the commits' arrivals are warp 0's alone
      s += expect(kStage) + copy + wait_loop("LANDED", "%r9", 0, "%p4");
    } else {
      s += expect(kStage) + copy;
      // With the flag, warp 1 waits for its own copy first: the refill is then ordered after
      // that copy's landing, and only the tensor core's read is unsynchronized.
      s += p.refill_after_flag ? wait_loop("LANDED", "%r9", 0, "%p4") + spin_on_flag("STAGE_FREE")
                               : wait_loop("STAGE_FREE", "%r20", 0, "%p4");
      s += expect(kStage) + copy + wait_loop("REFILLED", "%r9", 1, "%p4");
    }
  }
  s += R"(DONE:
  ret;
}
)";
  return s;
}

// No-swizzle K-major canonical layout (as in tcgen05_test.cc).
// The shared address of `offset` in the dynamic array as reports print it (it starts at 1 KiB).
std::string hex_address(uint32_t offset) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", 1024 + offset);
  return text;
}

std::string run(const Plant& p, const std::string& origin) {
  Tcgen05Product product;
  void* in = Device::get().allocate(kStage);
  std::memcpy(in, product.operands.data(), kStage);
  const std::string report = run_ptx(kernel(p), origin, "k", {1, 1, 1}, {64, 1, 1},
                                     {&in, &product.desc_a, &product.desc_b, &product.idesc}, kShared);
  Device::get().release(in);
  return report;
}

TEST(Tcgen05Races, CorrectHandOffsPass) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Device::get().options().seed = seed;
    EXPECT_EQ(run(Plant{}, "tcgen05_race_ok_copy_" + std::to_string(seed) + ".ptx"), "");
    Plant stores;
    stores.operands_by_stores = true;
    EXPECT_EQ(run(stores, "tcgen05_race_ok_stores_" + std::to_string(seed) + ".ptx"), "");
  }
  Device::get().options().seed = 1;
}

TEST(Tcgen05Races, ACopyOverwritingWhatTheTensorCoreReadWithoutItsCommitIsReported) {
  Plant p;
  p.refill_after_flag = true;
  const std::string report = run(p, "tcgen05_race_refill.ptx");
  EXPECT_NE(report.find("bulk copy into shared"), std::string::npos) << report;
  EXPECT_NE(report.find("overwrites what the tensor core (a tcgen05.mma operand) read with no synchronization between"),
            std::string::npos)
      << report;
}

TEST(Tcgen05Races, AnMmaReadingOperandsAnotherWarpWroteWithoutSynchronizationIsReported) {
  Plant p;
  p.operands_by_stores = true;
  p.mma_after_flag = true;
  const std::string report = run(p, "tcgen05_race_operands.ptx");
  EXPECT_NE(report.find("tcgen05.mma A at shared"), std::string::npos) << report;
  EXPECT_NE(report.find("reads what warp 1 wrote with no synchronization between"), std::string::npos) << report;
}

TEST(Tcgen05Races, AnMmaReadingBytesACopyLandedWithoutWaitingForItsMbarrierIsReported) {
  Plant p;
  p.mma_after_landing_flag = true;
  const std::string report = run(p, "tcgen05_race_landed.ptx");
  EXPECT_NE(report.find("tcgen05.mma A at shared"), std::string::npos) << report;
  EXPECT_NE(report.find("reads what a copy completing the mbarrier at shared " + hex_address(kFull) +
                        " wrote with no synchronization between"),
            std::string::npos)
      << report;
}

// The arrivals of two commits are not ordered with each other: a CTA that waited for the
// second only may exit while the first is still to arrive on shared memory that is gone. Which
// lands first is the scheduler's choice, so some seeds show it; every report must name it.
TEST(Tcgen05Races, ExitingBeforeAnEarlierCommitArrivedIsReported) {
  int reported = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Device::get().options().seed = seed;
    Plant p;
    p.two_commits = true;
    p.wait_both_commits = true;  // waits for both commits' mbarriers ...
    EXPECT_EQ(run(p, "tcgen05_race_both_commits_" + std::to_string(seed) + ".ptx"), "");
    p.wait_both_commits = false;  // ... or for the second one only
    const std::string report = run(p, "tcgen05_race_spare_commit_" + std::to_string(seed) + ".ptx");
    if (report.empty()) continue;
    ++reported;
    EXPECT_NE(report.find("asynchronous copies on its shared memory in flight"), std::string::npos) << report;
    EXPECT_NE(report.find("tcgen05.commit"), std::string::npos) << report;
  }
  Device::get().options().seed = 1;
  EXPECT_GT(reported, 0);
}

TEST(Tcgen05Races, ARefillIssuedBeforeTheLastCopyLandedIsReported) {
  Plant p;
  p.refill_before_landing = true;
  const std::string report = run(p, "tcgen05_race_waw.ptx");
  EXPECT_NE(report.find("while an earlier copy still writes it: a missing wait"), std::string::npos) << report;
}

}  // namespace
}  // namespace kgen::emu::testing
