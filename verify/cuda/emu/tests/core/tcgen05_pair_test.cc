// tcgen05 with .cta_group::2 on the emulator: a 256 x 16 x 16 bf16 product by a CTA pair (the
// even CTA issues it; each CTA holds half of A, B and D), and the defects of the pair protocol,
// planted into the same kernel, each reported.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device.h"
#include "core/numbers.h"
#include "run_ptx.h"
#include "tensor/umma.h"

namespace kgen::emu::testing {
namespace {

// The defects a kernel variant plants (all false: a correct kernel).
struct Plant {
  bool leader_only_commit = false;  // the commit arrives on the even CTA's mbarrier only
  bool odd_skips_wait = false;      // the odd CTA reads its half of D without waiting
  bool odd_allocates_64 = false;    // the odd CTA's warp asks for other columns than the even's
  bool odd_never_allocates = false;  // the odd CTA's warp never joins the allocation
  bool mixed_group = false;         // the commit says .cta_group::1 after cta_group::2 MMAs
};

constexpr int kM = 256, kN = 16, kK = 16;  // the pair's MMA; each CTA holds M/2 rows, N/2 of B
constexpr uint32_t kABytes = kM / 2 * kK * 2, kBBytes = kN / 2 * kK * 2;
constexpr uint32_t kSlot = kABytes + kBBytes;  // the allocated address
constexpr uint32_t kMbar = kSlot + 8;

// No-swizzle K-major canonical layout (as tcgen05_test.cc): LBO 128, SBO 256.
uint32_t operand_offset(int mn, int k) { return (mn / 8) * 256 + (mn % 8) * 16 + (k / 8) * 128 + (k % 8) * 2; }

std::string kernel(const Plant& p) {
  std::string regs = "{";
  for (int j = 0; j < kN; ++j) regs += (j ? ", %v" : "%v") + std::to_string(j);
  regs += "}";
  std::string stores;
  for (int j = 0; j < kN; ++j) stores += "  st.global.b32 [%rd9+" + std::to_string(4 * j) + "], %v" + std::to_string(j) + ";\n";
  const std::string odd_alloc = p.odd_allocates_64 ? "64" : "32";
  return R"(.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 desc_a, .param .u64 desc_b, .param .u32 idesc)
{
  .reg .b32 %r<40>; .reg .b32 %v<16>; .reg .b64 %rd<16>; .reg .pred %p<12>; .reg .b16 %rs<2>;
  mov.u32 %r1, smem;
  mov.u32 %r2, %tid.x;
  shr.u32 %r3, %r2, 5;
  mov.u32 %r20, %cluster_ctarank;
  setp.eq.u32 %p5, %r20, 0;
  // This CTA's half of the operands: in + rank * kSlot, already in the canonical layout.
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd11, %r20, )" + std::to_string(kSlot) + R"(;
  add.s64 %rd1, %rd1, %rd11;
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
  fence.proxy.async.shared::cta;
  add.u32 %r8, %r1, )" + std::to_string(kSlot) + R"(;
  add.u32 %r9, %r1, )" + std::to_string(kMbar) + R"(;
  setp.eq.u32 %p2, %r2, 0;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra ALLOCATED;
)" + (p.odd_never_allocates ? "  @!%p5 bra ALLOCATED;\n" : "") + R"(
  @%p5 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r8], 32;
  @!%p5 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r8], )" + odd_alloc + R"(;
  tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
ALLOCATED:
  @%p2 mbarrier.init.shared::cta.b64 [%r9], 1;
  fence.mbarrier_init.release.cluster;
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r10, [%r8];
  and.pred %p6, %p2, %p5;
  @!%p6 bra WAIT;
  // Thread 0 of the even CTA issues D = A B^T for the pair and commits it to both CTAs.
  ld.param.u64 %rd4, [desc_a];
  ld.param.u64 %rd5, [desc_b];
  ld.param.u32 %r11, [idesc];
  shr.u32 %r12, %r1, 4;
  and.b32 %r12, %r12, 16383;  // the descriptor's 14-bit start address: the CTA's offset only
  cvt.u64.u32 %rd6, %r12;
  add.s64 %rd4, %rd4, %rd6;
  add.u32 %r13, %r1, )" + std::to_string(kABytes) + R"(;
  shr.u32 %r13, %r13, 4;
  and.b32 %r13, %r13, 16383;
  cvt.u64.u32 %rd7, %r13;
  add.s64 %rd5, %rd5, %rd7;
  mov.u32 %r14, 0;
  mov.u16 %rs1, 3;
  {
  .reg .pred acc;
  setp.ne.b32 acc, %r14, 0;
  tcgen05.mma.cta_group::2.kind::f16 [%r10], %rd4, %rd5, %r11, {%r14, %r14, %r14, %r14, %r14, %r14, %r14, %r14}, acc;
  }
)" + (p.mixed_group ? "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r9], %rs1;\n"
      : p.leader_only_commit ? "  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%r9];\n"
                             : "  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r9], %rs1;\n") +
         R"(WAIT:
)" + (p.odd_skips_wait ? "  @!%p5 bra WAITED;\n" : "") + R"(
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r9], 0;
  @!%p4 bra WAIT;
WAITED:
  tcgen05.fence::after_thread_sync;
  // Warp w reads lanes 32 w .. 32 w + 31 of its CTA's half of D.
  shl.b32 %r16, %r3, 21;
  add.u32 %r17, %r10, %r16;
  tcgen05.ld.sync.aligned.32x32b.x16.b32 )" + regs + R"(, [%r17];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd8, [out];
  mad.lo.u32 %r18, %r20, 128, %r2;
  mul.wide.u32 %rd10, %r18, )" + std::to_string(4 * kN) + R"(;
  add.s64 %rd9, %rd8, %rd10;
)" + stores + R"(
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @%p3 bra DONE;
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r10, 32;
DONE:
  ret;
}
)";
}

struct Result {
  std::string report;
  std::vector<float> out, expected;
};

Result run(const Plant& p, const std::string& origin) {
  // a: M x K, b: N x K; CTA h holds rows h M/2.. of a and h N/2.. of b in its half of `in`.
  std::vector<uint8_t> operands(2 * kSlot);
  std::vector<float> a(kM * kK), b(kN * kK);
  for (int m = 0; m < kM; ++m)
    for (int k = 0; k < kK; ++k) {
      a[m * kK + k] = static_cast<float>((m + 3 * k) % 7 - 3);
      const uint16_t v = to_bf16(a[m * kK + k]);
      std::memcpy(operands.data() + (m / (kM / 2)) * kSlot + operand_offset(m % (kM / 2), k), &v, 2);
    }
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < kK; ++k) {
      b[n * kK + k] = static_cast<float>((5 * n + k) % 9 - 4) * 0.25f;
      const uint16_t v = to_bf16(b[n * kK + k]);
      std::memcpy(operands.data() + (n / (kN / 2)) * kSlot + kABytes + operand_offset(n % (kN / 2), k), &v, 2);
    }
  UmmaSmemDescriptor f;
  f.leading_byte_offset = 128;
  f.stride_byte_offset = 256;
  uint64_t desc_a = encode_umma_smem_descriptor(f), desc_b = desc_a;
  UmmaInstrDescriptor id;
  id.c_format = 1;
  id.a_format = id.b_format = 1;  // bf16
  id.n = kN;
  id.m = kM;
  uint32_t idesc = encode_umma_instr_descriptor(id);

  void* in = Device::get().allocate(operands.size());
  std::memcpy(in, operands.data(), operands.size());
  void* out = Device::get().allocate(kM * kN * 4);
  Result r;
  try {
    Device::get().load_ptx(kernel(p), origin);
    std::vector<void*> args{&in, &out, &desc_a, &desc_b, &idesc};
    Device::get().launch("k", {2, 1, 1}, {128, 1, 1}, kMbar + 8, args.data(), {2, 1, 1}, true);
  } catch (const EmulationError& e) {
    r.report = e.what();
  }
  r.out.assign(static_cast<float*>(out), static_cast<float*>(out) + kM * kN);
  r.expected.assign(kM * kN, 0);
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n)
      for (int k = 0; k < kK; ++k) r.expected[m * kN + n] += a[m * kK + k] * b[n * kK + k];
  Device::get().release(in);
  Device::get().release(out);
  return r;
}

void expect_report(const Result& r, const std::string& text) { EXPECT_NE(r.report.find(text), std::string::npos) << r.report; }

TEST(Tcgen05Pair, PairMmaGivesTheProductInBothCtas) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Device::get().options().seed = seed;
    const Result r = run(Plant{}, "tcgen05_pair_ok_" + std::to_string(seed) + ".ptx");
    ASSERT_EQ(r.report, "");
    for (int i = 0; i < kM * kN; ++i) ASSERT_EQ(r.out[i], r.expected[i]) << "row " << i / kN << " column " << i % kN;
  }
  Device::get().options().seed = 1;
}

TEST(Tcgen05Pair, ACommitThatSignalsOnlyTheEvenCtaLeavesTheOddWaiting) {
  Plant p;
  p.leader_only_commit = true;
  const Result r = run(p, "tcgen05_pair_leader_commit.ptx");
  expect_report(r, "deadlock");
  expect_report(r, "spins on the mbarrier");
}

TEST(Tcgen05Pair, TheOddCtaReadingItsHalfBeforeItsCommitPhaseIsReported) {
  Plant p;
  p.odd_skips_wait = true;
  const Result r = run(p, "tcgen05_pair_odd_no_wait.ptx");
  // Depending on the interleaving the read comes before the MMA's issue (a hand-off with no
  // fences) or after it (before the commit's phase): either names both.
  expect_report(r, "tcgen05.ld");
  expect_report(r, "tcgen05.mma");
}

TEST(Tcgen05Pair, AllocationsOfDifferentSizesAreReported) {
  Plant p;
  p.odd_allocates_64 = true;
  expect_report(run(p, "tcgen05_pair_alloc_sizes.ptx"), "asks for");
}

TEST(Tcgen05Pair, AnAllocationThePeerNeverJoinsIsADeadlock) {
  Plant p;
  p.odd_never_allocates = true;
  const Result r = run(p, "tcgen05_pair_alloc_alone.ptx");
  expect_report(r, "deadlock");
  expect_report(r, "tcgen05.alloc.cta_group::2");
}

TEST(Tcgen05Pair, MixingCtaGroupsIsReported) {
  Plant p;
  p.mixed_group = true;
  expect_report(run(p, "tcgen05_pair_mixed.ptx"), "mixes .cta_group::2 and .cta_group::1");
}

}  // namespace
}  // namespace kgen::emu::testing
