#include "tensor/umma.h"

namespace kgen::emu {

UmmaSmemDescriptor decode_umma_smem_descriptor(uint64_t d) {
  UmmaSmemDescriptor f;
  f.start_address = static_cast<uint32_t>(d & 0x3fff) << 4;
  f.leading_byte_offset = static_cast<uint32_t>((d >> 16) & 0x3fff) << 4;
  f.stride_byte_offset = static_cast<uint32_t>((d >> 32) & 0x3fff) << 4;
  f.fixed = static_cast<uint32_t>((d >> 46) & 0x7);
  f.base_offset = static_cast<uint32_t>((d >> 49) & 0x7);
  f.lbo_absolute = ((d >> 52) & 1) != 0;
  f.layout = static_cast<UmmaLayout>((d >> 61) & 0x7);
  return f;
}

uint64_t encode_umma_smem_descriptor(const UmmaSmemDescriptor& f) {
  return uint64_t{(f.start_address & 0x3ffff) >> 4} | uint64_t{(f.leading_byte_offset & 0x3ffff) >> 4} << 16 |
         uint64_t{(f.stride_byte_offset & 0x3ffff) >> 4} << 32 | uint64_t{f.fixed & 0x7} << 46 |
         uint64_t{f.base_offset & 0x7} << 49 | uint64_t{f.lbo_absolute ? 1u : 0u} << 52 |
         uint64_t{static_cast<uint8_t>(f.layout) & 0x7u} << 61;
}

std::string check_umma_smem_descriptor(uint64_t descriptor, Major major) {
  const UmmaSmemDescriptor f = decode_umma_smem_descriptor(descriptor);
  if (f.fixed != 1) return "tcgen05 shared memory descriptor bits 46-48 are not 0b001";
  switch (f.layout) {
    case UmmaLayout::kNone: case UmmaLayout::kSwizzle128B: case UmmaLayout::kSwizzle64B: case UmmaLayout::kSwizzle32B:
      break;
    case UmmaLayout::kSwizzle128BBase32B:
      if (major == Major::kK) return "tcgen05 128B_BASE32B swizzling is defined for MN-major operands only";
      break;
    default:
      return "tcgen05 shared memory descriptor swizzle " + std::to_string(static_cast<int>(f.layout)) + " is invalid";
  }
  if (f.base_offset != 0) return "tcgen05 descriptor base offset " + std::to_string(f.base_offset) + " is not supported by the emulator";
  if (f.lbo_absolute) return "tcgen05 descriptor absolute leading-dimension address mode is not supported by the emulator";
  return "";
}

uint32_t umma_operand_element_address(uint64_t descriptor, Major major, int mn, int k, int element_bytes) {
  const UmmaSmemDescriptor d = decode_umma_smem_descriptor(descriptor);
  CanonicalOperand op;
  switch (d.layout) {
    case UmmaLayout::kSwizzle32B: op.swizzle = kSwizzle32B; break;
    case UmmaLayout::kSwizzle64B: op.swizzle = kSwizzle64B; break;
    case UmmaLayout::kSwizzle128B: op.swizzle = kSwizzle128B; break;
    case UmmaLayout::kSwizzle128BBase32B:
      op.swizzle = kSwizzle128BAtom32B;
      op.k_group_rows = 4;  // the pattern repeats every 4 rows of 128 bytes
      break;
    default: op.swizzle = kSwizzleNone; break;
  }
  op.width_chunks = op.swizzle.span_bytes() / 16;
  op.interleave = op.swizzle.bits == 0;
  op.leading_byte_offset = d.leading_byte_offset;
  op.stride_byte_offset = d.stride_byte_offset;
  return canonical_element_address(op, d.start_address, major, mn, k, element_bytes);
}

UmmaInstrDescriptor decode_umma_instr_descriptor(uint32_t d) {
  UmmaInstrDescriptor f;
  f.sparse_id2 = d & 0x3;
  f.sparse = (d >> 2) & 1;
  f.saturate = (d >> 3) & 1;
  f.c_format = (d >> 4) & 0x3;
  f.a_format = (d >> 7) & 0x7;
  f.b_format = (d >> 10) & 0x7;
  f.a_negate = (d >> 13) & 1;
  f.b_negate = (d >> 14) & 1;
  f.a_major = ((d >> 15) & 1) ? Major::kMN : Major::kK;
  f.b_major = ((d >> 16) & 1) ? Major::kMN : Major::kK;
  f.n = ((d >> 17) & 0x3f) << 3;
  f.m = ((d >> 24) & 0x1f) << 4;
  f.max_shift = (d >> 30) & 0x3;
  return f;
}

uint32_t encode_umma_instr_descriptor(const UmmaInstrDescriptor& f) {
  return (f.sparse_id2 & 0x3) | uint32_t{f.sparse} << 2 | uint32_t{f.saturate} << 3 | (f.c_format & 0x3) << 4 |
         (f.a_format & 0x7) << 7 | (f.b_format & 0x7) << 10 | uint32_t{f.a_negate} << 13 | uint32_t{f.b_negate} << 14 |
         uint32_t{f.a_major == Major::kMN} << 15 | uint32_t{f.b_major == Major::kMN} << 16 | ((f.n >> 3) & 0x3f) << 17 |
         ((f.m >> 4) & 0x1f) << 24 | (f.max_shift & 0x3) << 30;
}

uint32_t tcgen05_registers(TmemShape shape, uint32_t num) {
  switch (shape) {
    case TmemShape::k16x128b: return 2 * num;
    case TmemShape::k16x256b: return 4 * num;
    default: return num;
  }
}

TmemCell tcgen05_ld_st_cell(TmemShape shape, uint32_t taddr, int lane, int reg, uint32_t split) {
  const uint32_t l = static_cast<uint32_t>(lane), r = static_cast<uint32_t>(reg);
  uint32_t row = 0, column = 0;
  switch (shape) {
    case TmemShape::k32x32b: row = l, column = r; break;
    case TmemShape::k16x64b: row = l / 4 + 8 * (l % 2), column = l / 2 % 2 + 2 * r; break;
    case TmemShape::k16x128b: row = l / 4 + 8 * (r % 2), column = l % 4 + 4 * (r / 2); break;
    case TmemShape::k16x256b: row = l / 4 + 8 * (r / 2 % 2), column = r % 2 + 2 * (l % 4) + 8 * (r / 4); break;
    case TmemShape::k16x32bx2: row = l % 16, column = r + split * (l / 16); break;
  }
  return {(taddr >> 16) + row, (taddr & 0xffff) + column};
}

std::string check_tcgen05_32x32b(uint32_t taddr, int warp_id, int columns) {
  return check_tcgen05_access(TmemShape::k32x32b, taddr, warp_id, static_cast<uint32_t>(columns));
}

std::string check_tcgen05_access(TmemShape shape, uint32_t taddr, int warp_id, uint32_t columns) {
  const TmemCell cell = tmem_cell(taddr);
  const uint32_t first_lane = 32u * static_cast<uint32_t>(warp_id % 4);
  const uint32_t lanes = tcgen05_lanes(shape);
  const char* name = shape == TmemShape::k32x32b ? ".32x32b" : "16-lane shape";
  // A 16-lane shape reads either half of the warp's 32 lanes (lane alignment 0 or 16).
  if (cell.lane < first_lane || cell.lane + lanes > first_lane + 32 || (cell.lane - first_lane) % lanes)
    return "tcgen05 " + std::string(name) + ": warp " + std::to_string(warp_id) + " may access lanes " +
           std::to_string(first_lane) + ".." + std::to_string(first_lane + 31) + ", not " + std::to_string(lanes) +
           " from lane " + std::to_string(cell.lane);
  if (cell.column + columns > 512)
    return "tcgen05 " + std::string(name) + ": columns " + std::to_string(cell.column) + "+" + std::to_string(columns) +
           " run past column 512";
  return "";
}

}  // namespace kgen::emu
