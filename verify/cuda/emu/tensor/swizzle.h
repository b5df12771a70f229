// The shared-memory swizzles of TMA, wgmma and tcgen05, as CuTe's Swizzle<B,M,S> on byte addresses:
// the B bits of the address starting at bit M+S are XORed into the B bits starting at bit M. The
// hardware applies them to the shared-window address itself, not to an offset from the start of a
// tile: that is what lets a wgmma descriptor start in the middle of a 128-byte swizzle row (CuTe
// advances a descriptor through a K-major tile by adding unswizzled offsets to its start address)
// and why tiles are aligned to the pattern's repeat (Swizzle::repeat_bytes).
#pragma once

#include <cstdint>

namespace kgen::emu {

struct Swizzle {
  int bits = 0;   // B: how many bits are XORed (0: the identity)
  int base = 4;   // M: the lowest bit changed (4: whole 16-byte chunks move)
  int shift = 3;  // S: how far above `base` the bits that select the XOR pattern sit

  constexpr uint32_t operator()(uint32_t address) const {
    if (bits == 0) return address;
    const uint32_t source = ((1u << bits) - 1u) << (base + shift);
    return address ^ ((address & source) >> shift);
  }
  // The pattern repeats every this many bytes: a tile aligned to it sees the pattern CuTe assumes.
  constexpr uint32_t repeat_bytes() const { return bits == 0 ? 16u : 1u << (base + shift + bits); }
  // The span a row of the pattern permutes within (the "swizzle width": 32, 64 or 128 bytes).
  constexpr uint32_t span_bytes() const { return bits == 0 ? 16u : 1u << (base + bits); }
  constexpr bool operator==(const Swizzle&) const = default;
};

inline constexpr Swizzle kSwizzleNone{0, 4, 3};
inline constexpr Swizzle kSwizzle32B{1, 4, 3};   // 16-byte chunks permuted within 32 bytes, 8 rows of 32 B
inline constexpr Swizzle kSwizzle64B{2, 4, 3};   // ... within 64 bytes, pattern every 512 B
inline constexpr Swizzle kSwizzle128B{3, 4, 3};  // ... within 128 bytes, pattern every 1024 B
// CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B and tcgen05's "128-byte with 32-byte atomic swizzling": 32-byte
// chunks permuted within 128 bytes (CuTe: get_tma_swizzle_base for M=5, Layout_MN_SW128_32B_Atom).
inline constexpr Swizzle kSwizzle128BAtom32B{2, 5, 2};

}  // namespace kgen::emu
