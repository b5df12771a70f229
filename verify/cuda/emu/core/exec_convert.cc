// cvt (integer widths, float <-> float with rounding, float <-> integer with saturation, the
// packed f16x2/bf16x2 forms) and cvta (generic <-> state-space addresses).
#include <cmath>

#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

double to_double(Type t, uint64_t v) {
  switch (t) {
    case Type::f32: return f32(v);
    case Type::f64: return f64(v);
    case Type::f16: return from_f16(static_cast<uint16_t>(v));
    case Type::bf16: return from_bf16(static_cast<uint16_t>(v));
    default: break;
  }
  return is_signed(t) ? static_cast<double>(sign_extend(v, type_bits(t))) : static_cast<double>(truncate(v, type_bits(t)));
}

double round_integral(double x, Rounding r) {
  switch (r) {
    case Rounding::rni: case Rounding::rn: return std::nearbyint(x);  // ties to even (default mode)
    case Rounding::rzi: case Rounding::rz: return std::trunc(x);
    case Rounding::rmi: case Rounding::rm: return std::floor(x);
    case Rounding::rpi: case Rounding::rp: return std::ceil(x);
    default: return x;
  }
}

uint64_t convert(const Decoded& d, uint64_t v) {
  const Type to = d.type, from = d.type2;
  if (is_float(from) && !is_float(to)) {  // float -> integer: round, then clamp (NaN -> 0)
    double x = to_double(from, v);
    if (d.ftz && from == Type::f32) x = flush(static_cast<float>(x));
    if (std::isnan(x)) return 0;
    x = round_integral(x, d.rounding == Rounding::none ? Rounding::rzi : d.rounding);
    const uint32_t bits_out = type_bits(to);
    if (is_signed(to)) {
      const double lo = -std::ldexp(1.0, bits_out - 1), hi = std::ldexp(1.0, bits_out - 1) - 1;
      return truncate(static_cast<uint64_t>(static_cast<int64_t>(std::clamp(x, lo, hi))), bits_out);
    }
    const double hi = std::ldexp(1.0, bits_out) - 1;
    return truncate(static_cast<uint64_t>(std::clamp(x, 0.0, hi)), bits_out);
  }
  if (is_float(to)) {
    const Rounding r = d.rounding == Rounding::none ? Rounding::rn : d.rounding;
    double x = to_double(from, v);
    if (d.ftz && from == Type::f32) x = flush(static_cast<float>(x));
    if (d.rounding == Rounding::rni || d.rounding == Rounding::rzi || d.rounding == Rounding::rmi || d.rounding == Rounding::rpi)
      x = round_integral(x, d.rounding);
    float f;
    switch (to) {
      case Type::f64: return bits(x);
      case Type::f32:
        f = to_f32(x, r);
        if (d.ftz) f = flush(f);
        if (d.sat) f = std::isnan(f) ? 0.0f : std::clamp(f, 0.0f, 1.0f);
        return bits(f);
      case Type::f16: return narrow_float(static_cast<float>(x), 5, 10, r, d.sat);
      case Type::bf16: return narrow_float(static_cast<float>(x), 8, 7, r, d.sat);
      default: break;
    }
    throw EmulationError("cvt to an unsupported float type");
  }
  // integer -> integer: truncate or extend per the source's signedness, then clamp when .sat.
  const uint32_t from_bits = type_bits(from), to_bits = type_bits(to);
  const int64_t sv = is_signed(from) ? sign_extend(v, from_bits) : static_cast<int64_t>(truncate(v, from_bits));
  if (d.sat) {
    const __int128 x = is_signed(from) ? __int128{sv} : __int128{static_cast<int64_t>(truncate(v, from_bits))};
    const __int128 lo = is_signed(to) ? -(__int128{1} << (to_bits - 1)) : 0;
    const __int128 hi = is_signed(to) ? (__int128{1} << (to_bits - 1)) - 1 : (__int128{1} << to_bits) - 1;
    return truncate(static_cast<uint64_t>(std::clamp(x, lo, hi)), to_bits);
  }
  return truncate(static_cast<uint64_t>(sv), to_bits);
}

Step run_cvt(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) { w.set(op(d, 0), lane, convert(d, w.get(op(d, 1), lane, d)), d); });
  return Step::next;
}

// cvt.rn.{f16x2,bf16x2}.f32 d, a, b: a to the upper half, b to the lower.
Step run_cvt_pack(Warp& w, const Decoded& d, uint32_t mask) {
  const bool brain = d.type == Type::bf16x2;
  for_each_lane(mask, [&](int lane) {
    auto one = [&](uint64_t v) -> uint64_t {
      const float x = f32(v);
      return brain ? narrow_float(x, 8, 7, d.rounding, d.sat) : narrow_float(x, 5, 10, d.rounding, d.sat);
    };
    const uint64_t hi = one(w.get(op(d, 1), lane, d)), lo = one(w.get(op(d, 2), lane, d));
    w.set(op(d, 0), lane, (hi << 16) | lo, d);
  });
  return Step::next;
}

// cvta.space (state-space address -> generic) and cvta.to.space (generic -> state space).
Step run_cvta(Warp& w, const Decoded& d, uint32_t mask) {
  const bool to_space = d.mode == 1;
  uint64_t base = 0;
  switch (d.space) {
    case ptx::Space::shared: base = kSharedWindow; break;
    case ptx::Space::param: base = kParamWindow; break;
    case ptx::Space::local: base = kLocalWindow; break;
    default: base = 0; break;  // global: generic and global addresses coincide
  }
  for_each_lane(mask, [&](int lane) {
    const uint64_t a = w.get(op(d, 1), lane, d);
    uint64_t r;
    if (!to_space) {
      r = base + a;
    } else {
      // The null pointer is the one address outside the window a kernel may convert: CuTe's
      // cast_smem_ptr_to_uint(nullptr) does, and CUTLASS asserts the result is aligned (its
      // fmha reference kernel). Hardware subtracts an aligned window base, which gives 0 in the
      // low 32 bits, as a - base does here; using the result as an address is still a finding
      // (shared 0 lies below kSharedBase).
      if (base && a != 0 && (a < base || a >= base + kWindowSize))
        w.fail(d, "cvta.to converts a generic address that is not in that state space's window", lane);
      if (!base && window_of(a) != Window::global)
        w.fail(d, "cvta.to.global converts a generic address of another state space", lane);
      r = a - base;
    }
    w.set(op(d, 0), lane, truncate(r, type_bits(d.type)), d);
  });
  return Step::next;
}

}  // namespace

void decode_convert(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (in.parts[0] == "cvta") {
    d.mode = m.has("to") ? 1 : 0;
    d.space = m.space;
    d.type = m.last_type();
    for (const std::string& w : m.words)
      if (w != "to") throw Unsupported{"modifier ." + w};
    if (d.space == ptx::Space::none) throw Unsupported{"cvta without a state space"};
    d.run = run_cvta;
    return;
  }
  if (m.types.size() != 2) throw Unsupported{"cvt needs a destination and a source type"};
  if (!m.words.empty()) throw Unsupported{"modifier ." + m.words[0]};
  d.type = m.types[0];
  d.type2 = m.types[1];
  d.rounding = m.rounding;
  d.ftz = m.ftz;
  d.sat = m.sat;
  if (d.type == Type::f16x2 || d.type == Type::bf16x2) {
    if (d.type2 != Type::f32) throw Unsupported{"packed conversions from other than f32"};
    if (d.rounding == Rounding::none) d.rounding = Rounding::rn;
    d.run = run_cvt_pack;
    return;
  }
  if (d.type == Type::e4m3 || d.type == Type::e5m2 || d.type2 == Type::e4m3 || d.type2 == Type::e5m2 ||
      d.type == Type::tf32)
    throw Unsupported{"fp8/tf32 conversions"};
  d.run = run_cvt;
}

}  // namespace kgen::emu
