// What every instruction handler shares: iterating the lanes of a mask, integer values of a
// given width, and numbers in reports.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "core/machine.h"

namespace kgen::emu {

template <class F>
inline void for_each_lane(uint32_t mask, F&& f) {
  while (mask) {
    f(__builtin_ctz(mask));
    mask &= mask - 1;
  }
}

inline uint64_t truncate(uint64_t v, uint32_t bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); }
inline int64_t sign_extend(uint64_t v, uint32_t bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (bits - 1);
  v = truncate(v, bits);
  return static_cast<int64_t>((v ^ m) - m);
}

// An address or value in reports: 0x1c00.
inline std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The operands of an instruction: operand k.
inline const ptx::Operand& op(const Decoded& d, size_t k) { return d.in->operands[k]; }

}  // namespace kgen::emu
