// kgen's private encoding of a CUtensorMap. The 128 bytes of a CUtensorMap are opaque to
// programs: the host stand-in's cuTensorMapEncodeTiled checks every documented constraint and
// writes this; the emulator's TMA instructions read it back from the address the kernel hands
// them and refuse anything without the magic number (a map that was never encoded).
#pragma once

#include <cstdint>

namespace kgen::emu {

struct TensorMap {
  static constexpr uint32_t kMagic = 0x4d54474bu;  // "KGTM"
  static constexpr int kMaxRank = 5;

  uint32_t magic = 0;
  uint8_t data_type = 0;     // CUtensorMapDataType
  uint8_t rank = 0;          // 1..5
  uint8_t interleave = 0;    // CUtensorMapInterleave
  uint8_t swizzle = 0;       // CUtensorMapSwizzle
  uint8_t l2_promotion = 0;  // CUtensorMapL2promotion (no effect here)
  uint8_t oob_fill = 0;      // CUtensorMapFloatOOBfill
  uint8_t element_bytes = 0;
  uint8_t element_strides[kMaxRank] = {};
  uint8_t reserved[1] = {};
  uint32_t box_dim[kMaxRank] = {};
  uint64_t global_address = 0;
  uint64_t global_dim[kMaxRank] = {};
  uint64_t global_stride[kMaxRank] = {};  // bytes; [0] is the element size, [i] as encoded for i >= 1
};
static_assert(sizeof(TensorMap) <= 128, "a TensorMap must fit in a CUtensorMap");

}  // namespace kgen::emu
