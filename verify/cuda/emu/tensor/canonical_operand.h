// The canonical shared-memory layouts of matrix-multiply operands that wgmma (sm_90a) and
// tcgen05.mma (sm_100a) read through a descriptor: where element (mn, k) lies relative to the
// start address, given the leading and stride byte offsets. Both ISAs define the same core
// matrices; tcgen05 adds a 128-byte swizzle with 32-byte atoms. Kept apart from either
// instruction's descriptor encoding (gmma.h, umma.h), which only decide W, the swizzle and the
// offsets.
#pragma once

#include <cstdint>

#include "tensor/swizzle.h"

namespace kgen::emu {

// Which dimension of an operand is contiguous in 16-byte chunks. K-major: A is M x K row-major, B
// is N x K row-major (wgmma imm-trans-a/b = 0, tcgen05 a_major/b_major = 0). MN-major: the
// transpose.
enum class Major { kK, kMN };

struct CanonicalOperand {
  Swizzle swizzle;               // applied to the absolute shared address
  uint32_t width_chunks = 1;     // W: 16-byte chunks per swizzle row (1 when not swizzled)
  uint32_t k_group_rows = 8;     // MN-major: K rows per SBO step (8; 4 for 128B with 32-byte atoms)
  bool interleave = true;        // no swizzle: core matrices placed by LBO and SBO alone
  uint32_t leading_byte_offset = 0;
  uint32_t stride_byte_offset = 0;
};

// With T = 16 / element_bytes elements per chunk, the offset from the start address is
//   K-major,  interleave: (mn / 8) * SBO + (mn % 8) * 16    + (k / T) * LBO + (k % T) * e
//   K-major,  swizzled:   (mn / 8) * SBO + (mn % 8) * 16 W  + (k / T) * 16  + (k % T) * e  (LBO unused)
//   MN-major, interleave: (mn / T) * SBO + (k % 8) * 16     + (k / 8) * LBO + (mn % T) * e
//   MN-major, swizzled:   (mn / (T W)) * LBO + ((mn / T) % W) * 16 + (k % G) * 16 W + (k / G) * SBO + (mn % T) * e
// (G = k_group_rows) and the element's address is swizzle(start + offset). The trap: for MN-major
// the roles of LBO and SBO swap between the interleave and the swizzled layouts.
uint32_t canonical_element_address(const CanonicalOperand& operand, uint32_t start_address, Major major, int mn, int k,
                                   int element_bytes);

}  // namespace kgen::emu
