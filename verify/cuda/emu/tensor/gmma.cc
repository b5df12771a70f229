#include "tensor/gmma.h"

namespace kgen::emu {

GmmaDescriptor decode_gmma_descriptor(uint64_t descriptor) {
  GmmaDescriptor fields;
  fields.start_address = static_cast<uint32_t>(descriptor & 0x3fff) << 4;
  fields.leading_byte_offset = static_cast<uint32_t>((descriptor >> 16) & 0x3fff) << 4;
  fields.stride_byte_offset = static_cast<uint32_t>((descriptor >> 32) & 0x3fff) << 4;
  fields.base_offset = static_cast<uint32_t>((descriptor >> 49) & 0x7);
  fields.layout = static_cast<GmmaLayout>((descriptor >> 62) & 0x3);
  return fields;
}

uint64_t encode_gmma_descriptor(const GmmaDescriptor& fields) {
  return uint64_t{(fields.start_address & 0x3ffff) >> 4} | uint64_t{(fields.leading_byte_offset & 0x3ffff) >> 4} << 16 |
         uint64_t{(fields.stride_byte_offset & 0x3ffff) >> 4} << 32 | uint64_t{fields.base_offset & 0x7} << 49 |
         uint64_t{static_cast<uint8_t>(fields.layout)} << 62;
}

Swizzle gmma_swizzle(GmmaLayout layout) {
  switch (layout) {
    case GmmaLayout::kSwizzle128B: return kSwizzle128B;
    case GmmaLayout::kSwizzle64B: return kSwizzle64B;
    case GmmaLayout::kSwizzle32B: return kSwizzle32B;
    case GmmaLayout::kInterleave: break;
  }
  return kSwizzleNone;
}

std::string check_gmma_descriptor(uint64_t descriptor) {
  const GmmaDescriptor fields = decode_gmma_descriptor(descriptor);
  if (fields.base_offset != 0 && fields.layout != GmmaLayout::kInterleave)
    return "wgmma descriptor base offset " + std::to_string(fields.base_offset) +
           " (a swizzle pattern not starting at its boundary) is not supported by the emulator";
  return "";
}

uint32_t operand_element_address(uint64_t descriptor, Major major, int mn, int k, int element_bytes) {
  const GmmaDescriptor d = decode_gmma_descriptor(descriptor);
  CanonicalOperand operand;
  operand.swizzle = gmma_swizzle(d.layout);
  operand.width_chunks = operand.swizzle.span_bytes() / 16;
  operand.interleave = d.layout == GmmaLayout::kInterleave;
  operand.leading_byte_offset = d.leading_byte_offset;
  operand.stride_byte_offset = d.stride_byte_offset;
  return canonical_element_address(operand, d.start_address, major, mn, k, element_bytes);
}

FragmentCoord gmma_accumulator_coord(int thread, int value) {
  const int lane = thread % 32, warp = thread / 32;
  return {16 * warp + lane / 4 + 8 * ((value / 2) % 2), 8 * (value / 4) + 2 * (lane % 4) + value % 2};
}

FragmentCoord gmma_a_register_coord(int thread, int value, int element_bytes) {
  const int per_register = 4 / element_bytes;  // E
  const int lane = thread % 32, warp = thread / 32;
  const int reg = value / per_register;
  return {16 * warp + lane / 4 + 8 * (reg % 2),
          per_register * (lane % 4) + value % per_register + 4 * per_register * (reg / 2)};
}

}  // namespace kgen::emu
