#include "tensor/canonical_operand.h"

namespace kgen::emu {

uint32_t canonical_element_address(const CanonicalOperand& op, uint32_t start_address, Major major, int mn, int k,
                                   int element_bytes) {
  const uint32_t per_chunk = 16 / element_bytes;  // T
  const uint32_t w = op.width_chunks, lbo = op.leading_byte_offset, sbo = op.stride_byte_offset;
  const uint32_t m = static_cast<uint32_t>(mn), kk = static_cast<uint32_t>(k), e = element_bytes;
  uint32_t offset = 0;
  if (major == Major::kK) {
    // Core matrices are 8 rows (mn) x 16 bytes (k). Interleave: SBO steps 8 rows, LBO steps 16
    // bytes of k. Swizzled: a row is W chunks of k, rows W * 16 bytes apart, SBO steps 8 rows.
    const uint32_t chunk_step = op.interleave ? lbo : 16;
    offset = (m / 8) * sbo + (m % 8) * 16 * w + (kk / per_chunk) * chunk_step + (kk % per_chunk) * e;
  } else if (op.interleave) {
    // Core matrices are 8 rows (k) x 16 bytes (mn): SBO steps 16 bytes of mn, LBO steps 8 rows of k.
    offset = (m / per_chunk) * sbo + (kk % 8) * 16 + (kk / 8) * lbo + (m % per_chunk) * e;
  } else {
    // A swizzle atom is G rows (k) x W chunks (mn): LBO steps W chunks of mn, SBO steps G rows of k.
    const uint32_t chunk = m / per_chunk, g = op.k_group_rows;
    offset = (chunk / w) * lbo + (chunk % w) * 16 + (kk % g) * 16 * w + (kk / g) * sbo + (m % per_chunk) * e;
  }
  return op.swizzle(start_address + offset);
}

}  // namespace kgen::emu
