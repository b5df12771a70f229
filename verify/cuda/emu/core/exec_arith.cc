// add sub mul mad fma div rem abs neg min max copysign mul24 mad24: integer, f32 (scalar and the
// packed .f32x2 of sm_100a's add/sub/mul/fma), f64, and f16/bf16 (scalar and x2, computed in f32
// and rounded to the narrow type, as PTX defines).
#include <cmath>

#include "core/approximate.h"
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

enum Arith : uint8_t { kAdd, kSub, kMul, kMad, kFma, kDiv, kRem, kAbs, kNeg, kMin, kMax, kCopysign };
enum MulPart : uint8_t { kLo, kHi, kWide };

int64_t int_op(Arith a, MulPart part, bool is_signed, uint32_t bits, uint64_t x, uint64_t y, uint64_t z) {
  const int64_t sx = sign_extend(x, bits), sy = sign_extend(y, bits);
  const uint64_t ux = truncate(x, bits), uy = truncate(y, bits), uz = truncate(z, bits);
  auto product = [&]() -> uint64_t {
    if (part == kLo) return ux * uy;
    if (part == kWide) return is_signed ? static_cast<uint64_t>(sx * sy) : ux * uy;
    const unsigned __int128 p = is_signed ? static_cast<unsigned __int128>(static_cast<__int128>(sx) * sy)
                                          : static_cast<unsigned __int128>(ux) * uy;
    return static_cast<uint64_t>(p >> bits);
  };
  switch (a) {
    case kAdd: return static_cast<int64_t>(ux + uy);
    case kSub: return static_cast<int64_t>(ux - uy);
    case kMul: return static_cast<int64_t>(product());
    case kMad: return static_cast<int64_t>(product() + (part == kWide ? (is_signed ? static_cast<uint64_t>(sign_extend(z, 2 * bits)) : truncate(z, 2 * bits)) : uz));
    case kDiv:
      if (uy == 0) return -1;  // PTX: division by zero gives an unspecified value
      return is_signed ? sx / sy : static_cast<int64_t>(ux / uy);
    case kRem:
      if (uy == 0) return static_cast<int64_t>(ux);
      return is_signed ? sx % sy : static_cast<int64_t>(ux % uy);
    case kAbs: return sx < 0 ? -sx : sx;
    case kNeg: return -sx;
    case kMin: return is_signed ? std::min(sx, sy) : static_cast<int64_t>(std::min(ux, uy));
    case kMax: return is_signed ? std::max(sx, sy) : static_cast<int64_t>(std::max(ux, uy));
    default: return 0;
  }
}

float f32_op(Arith a, float x, float y, float z, const Decoded& d) {
  switch (a) {
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    case kMad: case kFma: return std::fmaf(x, y, z);
    case kDiv: return x / y;
    case kAbs: return std::fabs(x);
    case kNeg: return -x;
    case kMin:
    case kMax: {
      if (std::isnan(x) && std::isnan(y)) return std::nanf("");
      if (std::isnan(x)) return d.mode2 ? x : y;  // .NaN propagates
      if (std::isnan(y)) return d.mode2 ? y : x;
      if (x == 0 && y == 0) return (a == kMin) == (std::signbit(x) || std::signbit(y)) ? -0.0f : 0.0f;
      return a == kMin ? std::min(x, y) : std::max(x, y);
    }
    case kCopysign: return std::copysign(y, x);
    default: return 0;
  }
}

double f64_op(Arith a, double x, double y, double z) {
  switch (a) {
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    case kMad: case kFma: return std::fma(x, y, z);
    case kDiv: return x / y;
    case kAbs: return std::fabs(x);
    case kNeg: return -x;
    case kMin: return std::isnan(x) ? y : std::isnan(y) ? x : std::min(x, y);
    case kMax: return std::isnan(x) ? y : std::isnan(y) ? x : std::max(x, y);
    case kCopysign: return std::copysign(y, x);
    default: return 0;
  }
}

// f32 results under the instruction's rounding (add/sub/mul/fma .rz/.rm/.rp computed in f64).
float rounded(Arith a, float x, float y, float z, const Decoded& d) {
  if (d.rounding == Rounding::none || d.rounding == Rounding::rn || a == kAbs || a == kNeg || a == kMin || a == kMax)
    return f32_op(a, x, y, z, d);
  const double exact = a == kFma || a == kMad ? std::fma(double{x}, double{y}, double{z}) : f64_op(a, x, y, z);
  return to_f32(exact, d.rounding);
}

Step run_arith(Warp& w, const Decoded& d, uint32_t mask) {
  const Arith a = static_cast<Arith>(d.mode);
  const size_t inputs = d.in->operands.size() - 1;
  const Type t = d.type;
  for_each_lane(mask, [&](int lane) {
    const uint64_t x = w.get(op(d, 1), lane, d);
    const uint64_t y = inputs > 1 ? w.get(op(d, 2), lane, d) : 0;
    const uint64_t z = inputs > 2 ? w.get(op(d, 3), lane, d) : 0;
    uint64_t result;
    auto single = [&](uint64_t x32, uint64_t y32, uint64_t z32) {
      float fx = f32(x32), fy = f32(y32), fz = f32(z32);
      if (d.ftz) fx = flush(fx), fy = flush(fy), fz = flush(fz);
      float r;
      if (a == kDiv && (d.approx || d.mode2 == 2)) r = approximate(double{fx} / fy, kDivApprox, w, d, lane);
      else r = rounded(a, fx, fy, fz, d);
      if (d.ftz) r = flush(r);
      if (d.sat) r = std::isnan(r) ? 0.0f : std::clamp(r, 0.0f, 1.0f);
      return uint64_t{bits(r)};
    };
    if (t == Type::f32) {
      result = single(x, y, z);
    } else if (t == Type::f32x2) {
      // Two independent f32 operations on the halves of a .b64 register, each rounded as f32.
      auto half = [](uint64_t v, int h) { return (v >> (32 * h)) & 0xffffffffu; };
      result = single(half(x, 0), half(y, 0), half(z, 0)) | single(half(x, 1), half(y, 1), half(z, 1)) << 32;
    } else if (t == Type::f64) {
      result = bits(f64_op(a, f64(x), f64(y), f64(z)));
    } else if (t == Type::f16 || t == Type::bf16 || t == Type::f16x2 || t == Type::bf16x2) {
      const bool brain = t == Type::bf16 || t == Type::bf16x2;
      const int halves = t == Type::f16x2 || t == Type::bf16x2 ? 2 : 1;
      result = 0;
      for (int h = 0; h < halves; ++h) {
        auto widen = [&](uint64_t v) {
          const uint16_t b = static_cast<uint16_t>(v >> (16 * h));
          return brain ? from_bf16(b) : from_f16(b);
        };
        // One rounding: the f32 operation is exact enough for two 11-bit operands, and fma is
        // computed in f64 and rounded once.
        const double exact = a == kFma || a == kMad ? std::fma(double{widen(x)}, double{widen(y)}, double{widen(z)})
                                                    : double{f32_op(a, widen(x), widen(y), widen(z), d)};
        float r = static_cast<float>(exact);
        if (d.sat) r = std::isnan(r) ? 0.0f : std::clamp(r, 0.0f, 1.0f);
        result |= uint64_t{brain ? to_bf16(r) : to_f16(r)} << (16 * h);
      }
    } else {
      const uint32_t b = type_bits(t);
      const int64_t r = int_op(a, static_cast<MulPart>(d.mode2), is_signed(t), b, x, y, z);
      const uint32_t out_bits = (a == kMul || a == kMad) && d.mode2 == kWide ? 2 * b : b;
      result = truncate(static_cast<uint64_t>(r), out_bits);
      if (d.sat && t == Type::s32 && (a == kAdd || a == kSub)) {
        const int64_t exact = a == kAdd ? sign_extend(x, 32) + sign_extend(y, 32) : sign_extend(x, 32) - sign_extend(y, 32);
        result = truncate(static_cast<uint64_t>(std::clamp<int64_t>(exact, INT32_MIN, INT32_MAX)), 32);
      }
    }
    w.set(op(d, 0), lane, result, d);
  });
  return Step::next;
}

}  // namespace

void decode_arith(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  static const std::pair<const char*, Arith> names[] = {
      {"add", kAdd}, {"sub", kSub}, {"mul", kMul}, {"mad", kMad}, {"fma", kFma}, {"div", kDiv},
      {"rem", kRem}, {"abs", kAbs}, {"neg", kNeg}, {"min", kMin}, {"max", kMax}, {"copysign", kCopysign},
  };
  d.type = m.last_type();
  if (d.type == Type::none) throw Unsupported{"no type suffix"};
  bool found = false;
  for (const auto& [name, a] : names)
    if (in.parts[0] == name) d.mode = a, found = true;
  if (!found) throw Unsupported{"24-bit integer forms"};
  d.rounding = m.rounding;
  d.ftz = m.ftz;
  d.sat = m.sat;
  d.approx = m.approx;
  for (const std::string& w : m.words) {
    if (w == "lo") d.mode2 = kLo;
    else if (w == "hi") d.mode2 = kHi;
    else if (w == "wide") d.mode2 = kWide;
    else if (w == "NaN") d.mode2 = 1;
    else if (w == "cc") throw Unsupported{"carry chains"};
    else throw Unsupported{"modifier ." + w};
  }
  if (m.full) d.mode2 = 2;  // div.full
  if (d.type == Type::f32x2 && d.mode != kAdd && d.mode != kSub && d.mode != kMul && d.mode != kFma)
    throw Unsupported{"f32x2 other than add, sub, mul, fma"};
  if ((d.type == Type::f32 || d.type == Type::f32x2) && d.rounding != Rounding::none && d.rounding != Rounding::rn && d.rounding != Rounding::rz &&
      d.rounding != Rounding::rm && d.rounding != Rounding::rp)
    throw Unsupported{"rounding"};
  if (d.type == Type::f64 && d.rounding != Rounding::none && d.rounding != Rounding::rn)
    throw Unsupported{"f64 directed rounding"};
  d.run = run_arith;
}

}  // namespace kgen::emu
