// and or xor not cnot shl shr popc clz brev bfe bfi prmt shf lop3 bfind: bitwise and
// bit-field instructions on .pred, .b16/.b32/.b64 (and their typed aliases).
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

enum Bits : uint8_t { kAnd, kOr, kXor, kNot, kCnot, kShl, kShr, kPopc, kClz, kBrev, kBfe, kBfi, kPrmt, kShf, kLop3, kBfind };

uint64_t permute(uint64_t a, uint64_t b, uint64_t selector, uint8_t mode) {
  const uint64_t bytes = (truncate(b, 32) << 32) | truncate(a, 32);
  uint32_t result = 0;
  for (int k = 0; k < 4; ++k) {
    uint32_t sel;
    switch (mode) {
      case 0: sel = (selector >> (4 * k)) & 0xf; break;  // default: four 4-bit selectors
      default: throw Unsupported{"prmt mode"};
    }
    uint32_t byte = (bytes >> (8 * (sel & 7))) & 0xff;
    if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;  // sign replicate
    result |= byte << (8 * k);
  }
  return result;
}

Step run_bits(Warp& w, const Decoded& d, uint32_t mask) {
  const Bits b = static_cast<Bits>(d.mode);
  const uint32_t width = d.type == Type::pred ? 1 : type_bits(d.type);
  const size_t n = d.in->operands.size();
  for_each_lane(mask, [&](int lane) {
    const uint64_t x = w.get(op(d, 1), lane, d);
    const uint64_t y = n > 2 ? w.get(op(d, 2), lane, d) : 0;
    const uint64_t z = n > 3 ? w.get(op(d, 3), lane, d) : 0;
    uint64_t r = 0;
    switch (b) {
      case kAnd: r = x & y; break;
      case kOr: r = x | y; break;
      case kXor: r = x ^ y; break;
      case kNot: r = d.type == Type::pred ? !x : ~x; break;
      case kCnot: r = truncate(x, width) == 0; break;
      case kShl: {
        const uint64_t s = truncate(y, 32);
        r = s >= width ? 0 : x << s;
        break;
      }
      case kShr: {
        const uint64_t s = truncate(y, 32);
        if (is_signed(d.type)) r = static_cast<uint64_t>(sign_extend(x, width) >> std::min<uint64_t>(s, width - 1));
        else r = s >= width ? 0 : truncate(x, width) >> s;
        break;
      }
      case kBrev: {
        const uint64_t v = truncate(x, width);
        for (uint32_t k = 0; k < width; ++k)
          if (v >> k & 1) r |= uint64_t{1} << (width - 1 - k);
        break;
      }
      case kBfe: {  // the PTX ISA's definition, bit by bit
        const uint32_t pos = static_cast<uint32_t>(y & 0xff), len = static_cast<uint32_t>(z & 0xff);
        const uint32_t msb = width - 1;
        const uint64_t sbit = is_signed(d.type) && len > 0 ? (x >> std::min(pos + len - 1, msb) & 1) : 0;
        for (uint32_t k = 0; k <= msb; ++k) {
          const uint64_t bit = k < len && pos + k <= msb ? (x >> (pos + k) & 1) : sbit;
          r |= bit << k;
        }
        break;
      }
      default: break;  // popc, clz, bfind: run_count
      case kBfi: {  // bfi d, a(insert), b(base), pos, len
        const uint64_t pos = z & 0xff, len = w.get(op(d, 4), lane, d) & 0xff;
        const uint64_t fieldmask = len >= 64 ? ~uint64_t{0} : ((uint64_t{1} << len) - 1);
        r = pos >= width ? y : (y & ~(fieldmask << pos)) | ((x & fieldmask) << pos);
        break;
      }
      case kPrmt: r = permute(x, y, z, d.mode2); break;
      case kShf: {  // shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: funnel shift of b:a by c
        const uint64_t both = (truncate(y, 32) << 32) | truncate(x, 32);
        uint64_t s = truncate(z, 32);
        s = d.imm ? std::min<uint64_t>(s, 32) : s & 31;  // clamp or wrap
        r = d.mode2 == 0 ? (both << s) >> 32 : both >> s;
        break;
      }
      case kLop3: {
        const uint64_t lut = w.get(op(d, 4), lane, d);
        for (int bit = 0; bit < 32; ++bit) {
          const uint32_t index = ((x >> bit & 1) << 2) | ((y >> bit & 1) << 1) | (z >> bit & 1);
          r |= ((lut >> index) & 1) << bit;
        }
        break;
      }
    }
    w.set(op(d, 0), lane, truncate(r, width), d);
  });
  return Step::next;
}

// popc, clz, bfind: a count of the source's bits, written as .u32.
Step run_count(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t width = type_bits(d.type);
  for_each_lane(mask, [&](int lane) {
    uint64_t x = truncate(w.get(op(d, 1), lane, d), width);
    uint64_t r;
    if (d.mode == kPopc) {
      r = static_cast<uint64_t>(__builtin_popcountll(x));
    } else if (d.mode == kClz) {
      r = x == 0 ? width : static_cast<uint64_t>(__builtin_clzll(x)) - (64 - width);
    } else {
      if (is_signed(d.type) && (x >> (width - 1) & 1)) x = truncate(~x, width);
      r = x == 0 ? 0xffffffffu : 63 - static_cast<uint64_t>(__builtin_clzll(x));
    }
    w.set(op(d, 0), lane, r, d);
  });
  return Step::next;
}

}  // namespace

void decode_bits(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  static const std::pair<const char*, Bits> names[] = {
      {"and", kAnd}, {"or", kOr}, {"xor", kXor}, {"not", kNot}, {"cnot", kCnot}, {"shl", kShl}, {"shr", kShr},
      {"popc", kPopc}, {"clz", kClz}, {"brev", kBrev}, {"bfe", kBfe}, {"bfi", kBfi}, {"prmt", kPrmt},
      {"shf", kShf}, {"lop3", kLop3}, {"bfind", kBfind},
  };
  for (const auto& [name, b] : names)
    if (in.parts[0] == name) d.mode = b;
  d.type = m.last_type();
  if (d.type == Type::none) throw Unsupported{"no type suffix"};
  for (const std::string& w : m.words) {
    if (w == "l") d.mode2 = 0;
    else if (w == "r") d.mode2 = 1;
    else if (w == "wrap") d.imm = 0;
    else if (w == "clamp") d.imm = 1;
    else if (w == "shiftamt") throw Unsupported{"bfind.shiftamt"};
    else throw Unsupported{"modifier ." + w};
  }
  // popc/clz/bfind write a .u32 whatever their source width.
  if (d.mode == kPopc || d.mode == kClz || d.mode == kBfind) {
    d.run = run_count;
    return;
  }
  d.run = run_bits;
}

}  // namespace kgen::emu
