// setp set selp slct: comparisons (ordered and unordered for floats, unsigned aliases lo/ls/
// hi/hs), their optional boolean combination with a third predicate, and selects.
#include <cmath>

#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

enum Cmp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan };
enum BoolOp : uint8_t { kNone, kAnd, kOr, kXor };

bool compare_float(Cmp c, double x, double y) {
  const bool unordered = std::isnan(x) || std::isnan(y);
  switch (c) {
    case kEq: return !unordered && x == y;
    case kNe: return !unordered && x != y;
    case kLt: return !unordered && x < y;
    case kLe: return !unordered && x <= y;
    case kGt: return !unordered && x > y;
    case kGe: return !unordered && x >= y;
    case kEqu: return unordered || x == y;
    case kNeu: return unordered || x != y;
    case kLtu: return unordered || x < y;
    case kLeu: return unordered || x <= y;
    case kGtu: return unordered || x > y;
    case kGeu: return unordered || x >= y;
    case kNum: return !unordered;
    case kNan: return unordered;
  }
  return false;
}

template <class T>
bool compare_int(Cmp c, T x, T y) {
  switch (c) {
    case kEq: return x == y;
    case kNe: return x != y;
    case kLt: return x < y;
    case kLe: return x <= y;
    case kGt: return x > y;
    case kGe: return x >= y;
    default: return false;
  }
}

bool evaluate(const Decoded& d, uint64_t x, uint64_t y) {
  const Cmp c = static_cast<Cmp>(d.mode);
  switch (d.type) {
    case Type::f32: return compare_float(c, d.ftz ? flush(f32(x)) : f32(x), d.ftz ? flush(f32(y)) : f32(y));
    case Type::f64: return compare_float(c, f64(x), f64(y));
    case Type::f16: return compare_float(c, from_f16(static_cast<uint16_t>(x)), from_f16(static_cast<uint16_t>(y)));
    case Type::bf16: return compare_float(c, from_bf16(static_cast<uint16_t>(x)), from_bf16(static_cast<uint16_t>(y)));
    default: break;
  }
  const uint32_t width = type_bits(d.type);
  if (is_signed(d.type)) return compare_int(c, sign_extend(x, width), sign_extend(y, width));
  return compare_int(c, truncate(x, width), truncate(y, width));
}

bool combine(BoolOp b, bool r, bool c) {
  switch (b) {
    case kAnd: return r && c;
    case kOr: return r || c;
    case kXor: return r != c;
    case kNone: return r;
  }
  return r;
}

Step run_setp(Warp& w, const Decoded& d, uint32_t mask) {
  const BoolOp b = static_cast<BoolOp>(d.mode2);
  const ptx::Operand& dst = op(d, 0);
  for_each_lane(mask, [&](int lane) {
    const bool r = evaluate(d, w.get(op(d, 1), lane, d), w.get(op(d, 2), lane, d));
    const bool c = b == kNone ? false : w.get(op(d, 3), lane, d) != 0;
    w.set(dst, lane, combine(b, r, c), d);
    if (dst.reg2 >= 0) {  // p|q: q gets the complement
      ptx::Operand q;
      q.kind = ptx::Operand::Kind::reg;
      q.reg = static_cast<uint32_t>(dst.reg2);
      w.set(q, lane, combine(b, !r, c), d);
    }
  });
  return Step::next;
}

// set.CmpOp.dtype.stype: 0xffffffff / 1.0f for true.
Step run_set(Warp& w, const Decoded& d, uint32_t mask) {
  Decoded source = d;
  source.type = d.type2;
  for_each_lane(mask, [&](int lane) {
    const bool r = evaluate(source, w.get(op(d, 1), lane, d), w.get(op(d, 2), lane, d));
    const uint64_t out = d.type == Type::f32 ? (r ? bits(1.0f) : 0) : (r ? 0xffffffffu : 0);
    w.set(op(d, 0), lane, out, d);
  });
  return Step::next;
}

Step run_selp(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const bool p = w.get(op(d, 3), lane, d) != 0;
    w.set(op(d, 0), lane, w.get(op(d, p ? 1 : 2), lane, d), d);
  });
  return Step::next;
}

// slct.dtype.s32|f32 d, a, b, c: a when c >= 0.
Step run_slct(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const uint64_t c = w.get(op(d, 3), lane, d);
    const bool take_a = d.type2 == Type::f32 ? f32(c) >= 0 : sign_extend(c, 32) >= 0;
    w.set(op(d, 0), lane, w.get(op(d, take_a ? 1 : 2), lane, d), d);
  });
  return Step::next;
}

}  // namespace

void decode_compare(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  static const std::pair<const char*, Cmp> cmps[] = {
      {"eq", kEq},   {"ne", kNe},   {"lt", kLt},   {"le", kLe},   {"gt", kGt},   {"ge", kGe},   {"lo", kLt},
      {"ls", kLe},   {"hi", kGt},   {"hs", kGe},   {"equ", kEqu}, {"neu", kNeu}, {"ltu", kLtu}, {"leu", kLeu},
      {"gtu", kGtu}, {"geu", kGeu}, {"num", kNum}, {"nan", kNan},
  };
  d.ftz = m.ftz;
  const std::string& mnemonic = in.parts[0];
  if (mnemonic == "selp") {
    d.type = m.last_type();
    d.run = run_selp;
    return;
  }
  if (mnemonic == "slct") {
    if (m.types.size() != 2) throw Unsupported{"slct needs two types"};
    d.type = m.types[0];
    d.type2 = m.types[1];
    d.run = run_slct;
    return;
  }
  bool has_cmp = false;
  for (const std::string& w : m.words) {
    bool known = false;
    for (const auto& [name, c] : cmps)
      if (w == name) d.mode = c, known = has_cmp = true;
    if (w == "and") d.mode2 = kAnd, known = true;
    if (w == "or") d.mode2 = kOr, known = true;
    if (w == "xor") d.mode2 = kXor, known = true;
    if (!known) throw Unsupported{"modifier ." + w};
  }
  if (!has_cmp) throw Unsupported{"no comparison"};
  if (mnemonic == "setp") {
    d.type = m.last_type();
    d.run = run_setp;
  } else {
    if (m.types.size() != 2 || d.mode2 != kNone) throw Unsupported{"set forms other than set.CmpOp.dtype.stype"};
    d.type = m.types[0];
    d.type2 = m.types[1];
    d.run = run_set;
  }
}

}  // namespace kgen::emu
