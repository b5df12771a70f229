// The 128 x 16 x 16 bf16 product the tcgen05 tests run (tcgen05_test.cc for its numbers and
// hazards, tcgen05_race_test.cc for its races): operands in shared memory's no-swizzle K-major
// layout, their descriptors, and the PTX that issues the product and commits it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/numbers.h"
#include "tensor/umma.h"

namespace kgen::emu::testing {

constexpr int kM = 128, kN = 16, kK = 16;
constexpr uint32_t kABytes = kM * kK * 2, kBBytes = kN * kK * 2;

// No-swizzle K-major canonical layout: 8 x 16-byte core matrices, LBO 128 between the two K
// halves, SBO 256 between groups of 8 rows.
inline uint32_t operand_offset(int mn, int k) { return (mn / 8) * 256 + (mn % 8) * 16 + (k / 8) * 128 + (k % 8) * 2; }

struct Tcgen05Product {
  std::vector<float> a = std::vector<float>(kM * kK), b = std::vector<float>(kN * kK);  // [m][k], [n][k]
  std::vector<uint8_t> operands = std::vector<uint8_t>(kABytes + kBBytes);  // A then B, as in shared memory
  uint64_t desc_a = 0, desc_b = 0;
  uint32_t idesc = 0;

  // Small integers and halves: exact in bf16 and in the f32 sums.
  Tcgen05Product() {
    for (int m = 0; m < kM; ++m)
      for (int k = 0; k < kK; ++k) put(a[m * kK + k] = static_cast<float>((m + 2 * k) % 5 - 2), operand_offset(m, k));
    for (int n = 0; n < kN; ++n)
      for (int k = 0; k < kK; ++k)
        put(b[n * kK + k] = static_cast<float>((3 * n + k) % 7 - 3) * 0.5f, kABytes + operand_offset(n, k));
    UmmaSmemDescriptor f;
    f.leading_byte_offset = 128;
    f.stride_byte_offset = 256;
    desc_a = desc_b = encode_umma_smem_descriptor(f);
    UmmaInstrDescriptor id;
    id.c_format = 1;
    id.a_format = id.b_format = 1;  // bf16
    id.n = kN;
    id.m = kM;
    idesc = encode_umma_instr_descriptor(id);
  }

  // D = A B^T, [m][n].
  std::vector<float> expected() const {
    std::vector<float> d(kM * kN, 0);
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n)
        for (int k = 0; k < kK; ++k) d[m * kN + n] += a[m * kK + k] * b[n * kK + k];
    return d;
  }

 private:
  void put(float value, uint32_t offset) {
    const uint16_t v = to_bf16(value);
    std::memcpy(operands.data() + offset, &v, 2);
  }
};

// One thread issues the product into the tensor memory at %r10 from the operands at shared
// address %r1 (descriptors from the params desc_a, desc_b, idesc) and commits it to the
// mbarrier at `barrier` (a register). Uses %rd4-%rd7 and %r11-%r14.
inline std::string issue_and_commit_ptx(const std::string& barrier) {
  return R"(  ld.param.u64 %rd4, [desc_a];
  ld.param.u64 %rd5, [desc_b];
  ld.param.u32 %r11, [idesc];
  shr.u32 %r12, %r1, 4;
  cvt.u64.u32 %rd6, %r12;
  add.s64 %rd4, %rd4, %rd6;
  add.u32 %r13, %r1, )" + std::to_string(kABytes) + R"(;
  shr.u32 %r13, %r13, 4;
  cvt.u64.u32 %rd7, %r13;
  add.s64 %rd5, %rd5, %rd7;
  mov.u32 %r14, 0;
  {
  .reg .pred acc;
  setp.ne.b32 acc, %r14, 0;
  tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd4, %rd5, %r11, {%r14, %r14, %r14, %r14}, acc;
  }
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [)" + barrier + "];\n";
}

}  // namespace kgen::emu::testing
