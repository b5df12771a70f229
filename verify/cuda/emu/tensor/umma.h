// tcgen05 (sm_100a): the shared-memory descriptor and the instruction descriptor of
// tcgen05.mma .kind::f16 / .kind::tf32 / .kind::f8f6f4, and where tcgen05.ld/st .32x32b and the
// M = 128 cta_group::1 accumulator put data in tensor memory. PTX ISA "TensorCore 5th Generation
// Family Instructions": "Shared Memory Descriptor", "Instruction descriptor", "Matrix fragments"
// / "Data path layout". The descriptors are checked against CuTe's make_umma_desc and
// UMMA::make_instr_desc by tests/tensor; the tensor-memory rules against the ISA by hand.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/canonical_operand.h"

namespace kgen::emu {

// Shared memory descriptor bits 61-63 (3, 5 and 7 are invalid).
enum class UmmaLayout : uint8_t { kNone = 0, kSwizzle128BBase32B = 1, kSwizzle128B = 2, kSwizzle64B = 4, kSwizzle32B = 6 };

struct UmmaSmemDescriptor {
  uint32_t start_address = 0;        // bytes; bits 0-13 hold (address & 0x3ffff) >> 4
  uint32_t leading_byte_offset = 0;  // bytes; bits 16-29
  uint32_t stride_byte_offset = 0;   // bytes; bits 32-45
  uint32_t fixed = 1;                // bits 46-48: the ISA fixes them to 0b001
  uint32_t base_offset = 0;          // bits 49-51
  bool lbo_absolute = false;         // bit 52: LBO is an absolute address (sm_103a, 48-byte K)
  UmmaLayout layout = UmmaLayout::kNone;
};

UmmaSmemDescriptor decode_umma_smem_descriptor(uint64_t descriptor);
uint64_t encode_umma_smem_descriptor(const UmmaSmemDescriptor& fields);

// "" when the emulator can read a `major` operand through `descriptor`; otherwise why not: bits
// 46-48 not 0b001, an invalid layout (3, 5, 7), a nonzero base offset or the absolute LBO mode
// (both unsupported), or 128B_BASE32B with a K-major operand (the ISA defines it for MN-major).
std::string check_umma_smem_descriptor(uint64_t descriptor, Major major);

// The shared-window address of element (mn, k) of an operand: canonical_operand.h's layouts with
// W = 1, 2, 4, 8 chunks for none, 32B, 64B, 128B, and for 128B_BASE32B W = 8 with Swizzle<2,5,2>
// and (MN-major) groups of 4 K rows per SBO step.
uint32_t umma_operand_element_address(uint64_t descriptor, Major major, int mn, int k, int element_bytes);

// The 32-bit instruction descriptor of .kind::f16 / .kind::tf32 / .kind::f8f6f4 / .kind::i8.
struct UmmaInstrDescriptor {
  uint32_t sparse_id2 = 0;   // bits 0-1
  bool sparse = false;       // bit 2
  bool saturate = false;     // bit 3
  uint32_t c_format = 0;     // bits 4-5: 0 f16, 1 f32, 2 s32
  uint32_t a_format = 0;     // bits 7-9: kind::f16 0 f16, 1 bf16; kind::tf32 2; f8f6f4 0 e4m3, 1 e5m2, ...
  uint32_t b_format = 0;     // bits 10-12
  bool a_negate = false;     // bit 13
  bool b_negate = false;     // bit 14
  Major a_major = Major::kK; // bit 15 (1: MN-major, "transpose A")
  Major b_major = Major::kK; // bit 16
  uint32_t n = 0;            // bits 17-22 hold N >> 3
  uint32_t m = 0;            // bits 24-28 hold M >> 4 (bit 23 reserved)
  uint32_t max_shift = 0;    // bits 30-31 (.ws only)
};

UmmaInstrDescriptor decode_umma_instr_descriptor(uint32_t descriptor);
uint32_t encode_umma_instr_descriptor(const UmmaInstrDescriptor& fields);

// A tensor-memory address: bits 31-16 the lane, bits 15-0 the column (32-bit cells).
struct TmemCell {
  uint32_t lane = 0;
  uint32_t column = 0;
  bool operator==(const TmemCell&) const = default;
};
constexpr TmemCell tmem_cell(uint32_t taddr) { return {taddr >> 16, taddr & 0xffff}; }

// tcgen05.ld / tcgen05.st .32x32b.xN: thread `lane` (0..31) of a warp moves N consecutive columns
// of one lane: register r is cell (lane base + lane, column + r) of the warp's `taddr`. A warp may
// only touch the 32 lanes 32 * (warp_id % 4) .. +31 of the CTA's tensor memory, where warp_id is
// the warp's index in the CTA.
constexpr TmemCell tcgen05_32x32b_cell(uint32_t taddr, int lane, int reg) {
  return {(taddr >> 16) + static_cast<uint32_t>(lane), (taddr & 0xffff) + static_cast<uint32_t>(reg)};
}
// "" or why warp `warp_id` may not access 32 lanes from `taddr` (the lane field must be the first
// lane of the warp's quarter; the ISA's access restriction).
std::string check_tcgen05_32x32b(uint32_t taddr, int warp_id, int columns);

// The data-movement shapes of tcgen05.ld/st (PTX ISA 9.7.16.2.3): lanes x bits per .num.
enum class TmemShape : uint8_t { k32x32b, k16x64b, k16x128b, k16x256b, k16x32bx2 };
// Registers per thread of `shape` .xN (PTX ISA Table 49): N, 2N for 16x128b, 4N for 16x256b.
uint32_t tcgen05_registers(TmemShape shape, uint32_t num);
// Tensor-memory lanes the shape spans from the address's lane: 32, or 16.
inline uint32_t tcgen05_lanes(TmemShape shape) { return shape == TmemShape::k32x32b ? 32 : 16; }
// The cell register `reg` of thread `lane` (0..31) of a warp moves, for the warp's address
// `taddr`; `split` is .16x32bx2's immHalfSplitoff (threads 16..31 access taddr + split). The
// PTX ISA draws these layouts (Figures 183-187); tests/tensor proves them against the
// Copy_Traits of CuTe's SM100_TMEM_LOAD atoms:
//   32x32b:   (lane, reg)
//   16x64b:   (lane / 4 + 8 (lane % 2), (lane / 2) % 2 + 2 reg)
//   16x128b:  (lane / 4 + 8 (reg % 2), lane % 4 + 4 (reg / 2))
//   16x256b:  (lane / 4 + 8 ((reg / 2) % 2), reg % 2 + 2 (lane % 4) + 8 (reg / 4))
//   16x32bx2: (lane % 16, reg + split (lane / 16))
TmemCell tcgen05_ld_st_cell(TmemShape shape, uint32_t taddr, int lane, int reg, uint32_t split);
// "" or why warp `warp_id` may not access `columns` columns with `shape` from `taddr`: the lane
// field must start the warp's quarter (32 (warp_id % 4)) or, for a 16-lane shape, its second
// half (PTX ISA 9.7.16.8.1 "Access restrictions"; data-path layouts' lane alignment 0 or 16).
std::string check_tcgen05_access(TmemShape shape, uint32_t taddr, int warp_id, uint32_t columns);

// The accumulator D of tcgen05.mma cta_group::1 with M = 128 (32-bit elements, f32 or s32): row m
// of the M x N tile is tensor-memory lane m, column n is column n of the accumulator's address.
constexpr TmemCell umma_m128_accumulator_cell(uint32_t d_taddr, int row, int col) {
  return {(d_taddr >> 16) + static_cast<uint32_t>(row), (d_taddr & 0xffff) + static_cast<uint32_t>(col)};
}

}  // namespace kgen::emu
