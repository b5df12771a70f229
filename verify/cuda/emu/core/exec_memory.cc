// ld st prefetch atom red: every state space (generic decoded by window), vector forms, and
// atomics (the emulator runs one warp at a time, so each is trivially atomic).
#include <cmath>
#include <cstring>

#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

uint64_t load_bytes(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

void store_bytes(uint8_t* p, uint64_t v, uint32_t bytes) { std::memcpy(p, &v, bytes); }

// A .b128 register is two slots, the low 64 bits first (ptx/parser.cc).
ptx::Operand high_half(const ptx::Operand& o) {
  ptx::Operand h = o;
  h.reg = o.reg + 1;
  return h;
}

Step run_ld(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t bytes = type_bits(d.type) / 8;
  const ptx::Operand& dst = op(d, 0);
  if (d.type == Type::b128) {
    for_each_lane(mask, [&](int lane) {
      const uint8_t* p = w.access(d.space, w.address(op(d, 1), lane, d), 16, false, lane, d);
      w.set(dst, lane, load_bytes(p, 8), d);
      w.set(high_half(dst), lane, load_bytes(p + 8, 8), d);
    });
    return Step::next;
  }
  for_each_lane(mask, [&](int lane) {
    const uint64_t a = w.address(op(d, 1), lane, d);
    const uint8_t* p = w.access(d.space, a, bytes * d.vector, false, lane, d);
    for (uint32_t k = 0; k < d.vector; ++k) {
      uint64_t v = load_bytes(p + k * bytes, bytes);
      if (is_signed(d.type)) v = static_cast<uint64_t>(sign_extend(v, bytes * 8));
      w.set(d.vector == 1 ? dst : dst.elements[k], lane, v, d);
    }
  });
  return Step::next;
}

Step run_st(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t bytes = type_bits(d.type) / 8;
  const ptx::Operand& src = op(d, 1);
  if (d.type == Type::b128) {
    for_each_lane(mask, [&](int lane) {
      const uint64_t low = w.get(src, lane, d), high = w.get(high_half(src), lane, d);
      uint8_t* p = w.access(d.space, w.address(op(d, 0), lane, d), 16, true, lane, d);
      store_bytes(p, low, 8);
      store_bytes(p + 8, high, 8);
    });
    return Step::next;
  }
  for_each_lane(mask, [&](int lane) {
    const uint64_t a = w.address(op(d, 0), lane, d);
    uint64_t values[8];
    for (uint32_t k = 0; k < d.vector; ++k) values[k] = w.get(d.vector == 1 ? src : src.elements[k], lane, d);
    uint8_t* p = w.access(d.space, a, bytes * d.vector, true, lane, d);
    for (uint32_t k = 0; k < d.vector; ++k) store_bytes(p + k * bytes, values[k], bytes);
  });
  return Step::next;
}

Step run_prefetch(Warp&, const Decoded&, uint32_t) { return Step::next; }

enum Atomic : uint8_t { kAdd, kMin, kMax, kExch, kCas, kAnd, kOr, kXor, kInc, kDec };

uint64_t atomic_result(Atomic a, Type t, uint64_t old, uint64_t x, uint64_t y) {
  const uint32_t width = type_bits(t);
  switch (a) {
    case kAdd:
      if (t == Type::f32) return bits(f32(old) + f32(x));
      if (t == Type::f64) return bits(f64(old) + f64(x));
      if (t == Type::f16 || t == Type::bf16) {
        const float s = t == Type::f16 ? from_f16(static_cast<uint16_t>(old)) + from_f16(static_cast<uint16_t>(x))
                                       : from_bf16(static_cast<uint16_t>(old)) + from_bf16(static_cast<uint16_t>(x));
        return t == Type::f16 ? to_f16(s) : to_bf16(s);
      }
      return truncate(old + x, width);
    case kMin:
      if (t == Type::f32) return bits(std::fmin(f32(old), f32(x)));
      return is_signed(t) ? truncate(static_cast<uint64_t>(std::min(sign_extend(old, width), sign_extend(x, width))), width)
                          : std::min(truncate(old, width), truncate(x, width));
    case kMax:
      if (t == Type::f32) return bits(std::fmax(f32(old), f32(x)));
      return is_signed(t) ? truncate(static_cast<uint64_t>(std::max(sign_extend(old, width), sign_extend(x, width))), width)
                          : std::max(truncate(old, width), truncate(x, width));
    case kExch: return x;
    case kCas: return old == truncate(x, width) ? truncate(y, width) : old;
    case kAnd: return old & x;
    case kOr: return old | x;
    case kXor: return old ^ x;
    case kInc: return truncate(old, 32) >= truncate(x, 32) ? 0 : old + 1;
    case kDec: return (truncate(old, 32) == 0 || truncate(old, 32) > truncate(x, 32)) ? x : old - 1;
  }
  return old;
}

// atom{.space}.op{.vN}.type d, [a], b{, c}; red drops d.
Step run_atomic(Warp& w, const Decoded& d, uint32_t mask) {
  const bool has_result = d.mode2 == 1;
  const size_t first = has_result ? 1 : 0;
  const uint32_t bytes = type_bits(d.type) / 8;
  const Atomic a = static_cast<Atomic>(d.mode);
  for_each_lane(mask, [&](int lane) {
    const uint64_t address = w.address(op(d, first), lane, d);
    const ptx::Operand& value = op(d, first + 1);
    uint64_t x[8], y = 0;
    for (uint32_t k = 0; k < d.vector; ++k) x[k] = w.get(d.vector == 1 ? value : value.elements[k], lane, d);
    if (a == kCas) y = w.get(op(d, first + 2), lane, d);
    uint8_t* p = w.access(d.space, address, bytes * d.vector, true, lane, d);
    for (uint32_t k = 0; k < d.vector; ++k) {
      const uint64_t old = load_bytes(p + k * bytes, bytes);
      store_bytes(p + k * bytes, atomic_result(a, d.type, old, x[k], y), bytes);
      if (has_result) w.set(d.vector == 1 ? op(d, 0) : op(d, 0).elements[k], lane, old, d);
    }
  });
  return Step::next;
}

bool ignorable_hint(const std::string& w) {
  // Cache and eviction hints, memory-order and scope qualifiers of weak/relaxed accesses: no
  // effect on values in a sequentially executed emulator.
  static const char* hints[] = {"nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "weak", "relaxed", "volatile",
                                "L1::evict_last", "L1::evict_first", "L1::evict_normal", "L1::evict_unchanged",
                                "L1::no_allocate", "L2::evict_last", "L2::evict_first", "L2::evict_normal",
                                "L2::cache_hint", "L2::64B", "L2::128B", "L2::256B", "gpu", "cta", "sys", "cluster",
                                "acquire", "release", "acq_rel", "sc", "mmio", "noftz"};
  for (const char* h : hints)
    if (w == h) return true;
  return false;
}

}  // namespace

void decode_memory(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  d.space = m.space;
  d.vector = m.vector;
  d.type = m.last_type();
  if (in.parts[0] == "prefetch" || in.parts[0] == "prefetchu") {
    d.run = run_prefetch;  // prefetch.tensormap and cache prefetches: hints only
    return;
  }
  for (const std::string& w : m.words)
    if (!ignorable_hint(w)) throw Unsupported{"modifier ." + w};
  if (d.type == Type::none || (d.type == Type::b128 && d.vector != 1)) throw Unsupported{"type"};
  d.run = in.parts[0] == "ld" ? run_ld : run_st;
  const ptx::Operand& data = in.operands[d.run == run_ld ? 0 : 1];
  if (d.type == Type::b128 && data.kind != ptx::Operand::Kind::reg) throw Unsupported{".b128 of other than a register"};
  // ld/st.param on a .param declared in the body is a call's argument slot, which lives in the
  // thread's local depot (the parser's Variable::call_slot); kernel parameters are read-only.
  if (d.space == ptx::Space::param) {
    const ptx::Operand& a = in.operands[d.run == run_ld ? 1 : 0];
    const bool call_slot = a.kind == ptx::Operand::Kind::address && a.base_kind == ptx::Operand::Kind::symbol &&
                           a.symbol.kind == ptx::Symbol::Kind::variable && (a.symbol.index & ptx::Symbol::kFunctionLocal);
    if (call_slot) d.space = ptx::Space::local;
  }
}

void decode_atomic(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  static const std::pair<const char*, Atomic> ops[] = {
      {"add", kAdd}, {"min", kMin}, {"max", kMax}, {"exch", kExch}, {"cas", kCas},
      {"and", kAnd}, {"or", kOr},   {"xor", kXor}, {"inc", kInc},   {"dec", kDec},
  };
  d.space = m.space;
  d.vector = m.vector;
  d.type = m.last_type();
  d.mode2 = in.parts[0] == "atom" ? 1 : 0;
  d.atomic = true;
  bool found = false;
  for (const std::string& w : m.words) {
    bool known = ignorable_hint(w);
    for (const auto& [name, a] : ops)
      if (w == name) d.mode = a, known = found = true;
    if (!known) throw Unsupported{"modifier ." + w};
  }
  if (!found || d.type == Type::none) throw Unsupported{"atomic operation"};
  d.run = run_atomic;
}

}  // namespace kgen::emu
