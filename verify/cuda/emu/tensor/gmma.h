// wgmma.mma_async (sm_90a): the shared-memory matrix descriptor, where each element of an A or B
// operand it describes lies, and which accumulator and A-register elements each of the
// warpgroup's 128 threads holds. PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate":
// "Matrix Descriptor Format", "Shared Memory Matrix Layout", "Register Fragments".
//
// Every rule here is checked against CuTe (make_gmma_desc, GMMA::Layout_*_Atom, CLayout_64xN,
// ALayout_64x8/16/32) by tests/tensor.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/canonical_operand.h"
#include "tensor/swizzle.h"

namespace kgen::emu {

// Descriptor bits 62-63.
enum class GmmaLayout : uint8_t { kInterleave = 0, kSwizzle128B = 1, kSwizzle64B = 2, kSwizzle32B = 3 };

struct GmmaDescriptor {
  uint32_t start_address = 0;        // bytes; bits 0-13 hold (address & 0x3ffff) >> 4
  uint32_t leading_byte_offset = 0;  // bytes; bits 16-29 hold it >> 4
  uint32_t stride_byte_offset = 0;   // bytes; bits 32-45 hold it >> 4
  uint32_t base_offset = 0;          // bits 49-51
  GmmaLayout layout = GmmaLayout::kInterleave;
};

GmmaDescriptor decode_gmma_descriptor(uint64_t descriptor);
uint64_t encode_gmma_descriptor(const GmmaDescriptor& fields);

// The swizzle a layout type applies to shared addresses: 32B -> Swizzle<1,4,3>, 64B -> <2,4,3>,
// 128B -> <3,4,3>, interleave -> none.
Swizzle gmma_swizzle(GmmaLayout layout);

// "" when the emulator can read operands through `descriptor`; otherwise why not. A nonzero base
// offset (the ISA's escape for a pattern that does not start at its 256/512/1024-byte boundary)
// is refused: CuTe always writes 0, and the ISA does not say how the hardware combines it with the
// address bits.
std::string check_gmma_descriptor(uint64_t descriptor);

// The shared-window address of element (mn, k) of an operand described by `descriptor`: row mn of
// A (M x K) or B (N x K), column k, 0 <= k < the instruction's K (32 bytes of elements), elements of
// `element_bytes` (1, 2 or 4; the ISA allows MN-major only for 16-bit types, the rule itself is
// type-generic). The layouts are canonical_operand.h's with W = 1, 2, 4, 8 chunks for interleave,
// 32B, 64B, 128B, and the swizzle applied to the absolute address (so a start address in the
// middle of a swizzle row, as CuTe makes when it steps along K, reads the right chunks).
uint32_t operand_element_address(uint64_t descriptor, Major major, int mn, int k, int element_bytes);

// A row and column of a matrix fragment.
struct FragmentCoord {
  int row = 0;
  int col = 0;
  bool operator==(const FragmentCoord&) const = default;
};

// The accumulator D (and C) of wgmma m64nNk*: value `value` (0 <= value < N / 2) of thread
// `thread` (0..127 of the warpgroup) is element (row, col) of the 64 x N tile:
//   row = 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((value / 2) % 2)
//   col = 8 * (value / 4) + 2 * (thread % 4) + value % 2
// With .f32 or .s32 accumulators value v is register v; with .f16 accumulators register r packs
// values 2r (low 16 bits) and 2r + 1 (high 16 bits).
FragmentCoord gmma_accumulator_coord(int thread, int value);

// The A operand from registers (wgmma ... {a0, a1, a2, a3}, ...: the RS form): value `value` of
// thread `thread` is element (row m, col k) of the 64 x K tile. Each thread holds 4 .b32 registers
// of E = 4 / element_bytes elements: value v is part v % E of register v / E (part 0 in the low
// bits). For element_bytes 2 (f16/bf16, K 16), 4 (tf32, K 8) and 1 (e4m3/e5m2, K 32):
//   row = 16 * (thread / 32) + (thread % 32) / 4 + 8 * (r % 2)          with r = value / E
//   col = E * (thread % 4) + value % E + 4 E * (r / 2)
FragmentCoord gmma_a_register_coord(int thread, int value, int element_bytes);

}  // namespace kgen::emu
