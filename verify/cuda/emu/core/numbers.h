// Bit-exact conversions between the floating-point formats PTX names, with the rounding modes
// its cvt instruction spells (.rn, .rz, .rm, .rp). f16 and bf16 arithmetic in PTX is defined
// as the f32 operation rounded to the narrow type, so these are all the emulator needs.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace kgen::emu {

enum class Rounding : uint8_t { none, rn, rz, rm, rp, rni, rzi, rmi, rpi, rna, rs };

inline float f32(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }
inline uint64_t bits(float f) { return std::bit_cast<uint32_t>(f); }
inline double f64(uint64_t bits) { return std::bit_cast<double>(bits); }
inline uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }

// f32 -> a narrower binary format with `mantissa` fraction bits and `exponent` bits, rounded
// as asked; NaN becomes the canonical quiet NaN (PTX: "NaN inputs produce canonical NaN").
inline uint16_t narrow_float(float value, int exponent, int mantissa, Rounding rounding, bool saturate_finite = false) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 31) << (exponent + mantissa);
  const int bias = (1 << (exponent - 1)) - 1;
  const uint32_t exp_all_ones = (1u << exponent) - 1;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | (exp_all_ones << mantissa) | (1u << (mantissa - 1)));
  const uint32_t max_finite = ((exp_all_ones - 1) << mantissa) | ((1u << mantissa) - 1);
  const uint32_t infinity = exp_all_ones << mantissa;
  if (std::isinf(value)) return static_cast<uint16_t>(sign | (saturate_finite ? max_finite : infinity));
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude == 0) return static_cast<uint16_t>(sign);
  // Scale to an integer count of the target's smallest step at this magnitude.
  int e = std::ilogb(magnitude);
  if (e < 1 - bias) e = 1 - bias;  // subnormal range
  const double step = std::ldexp(1.0, e - mantissa);
  const double scaled = magnitude / step;  // exact: value has 24 bits, step is a power of two
  double integral = std::floor(scaled);
  const double fraction = scaled - integral;
  const bool negative = sign != 0;
  bool up = false;
  switch (rounding) {
    case Rounding::rz: up = false; break;
    case Rounding::rm: up = negative && fraction > 0; break;
    case Rounding::rp: up = !negative && fraction > 0; break;
    case Rounding::rna: up = fraction >= 0.5; break;
    default: up = fraction > 0.5 || (fraction == 0.5 && std::fmod(integral, 2.0) != 0); break;
  }
  if (up) integral += 1;
  const double result = integral * step;
  if (result == 0) return static_cast<uint16_t>(sign);
  int re = std::ilogb(result);
  if (re > bias) {  // overflow: infinity, or the largest finite value when rounding towards zero
    const bool to_inf = rounding == Rounding::rn || rounding == Rounding::rna || (rounding == Rounding::rp && !negative) ||
                        (rounding == Rounding::rm && negative) || rounding == Rounding::none;
    return static_cast<uint16_t>(sign | (to_inf && !saturate_finite ? infinity : max_finite));
  }
  if (re < 1 - bias) {  // subnormal
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(result / std::ldexp(1.0, 1 - bias - mantissa)));
  }
  const uint32_t frac = static_cast<uint32_t>(result / std::ldexp(1.0, re - mantissa)) - (1u << mantissa);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(re + bias) << mantissa) | frac);
}

inline float widen_float(uint16_t h, int exponent, int mantissa) {
  const uint32_t sign = (h >> (exponent + mantissa)) & 1;
  const uint32_t e = (h >> mantissa) & ((1u << exponent) - 1);
  const uint32_t f = h & ((1u << mantissa) - 1);
  const int bias = (1 << (exponent - 1)) - 1;
  double v;
  if (e == (1u << exponent) - 1) v = f ? std::nan("") : INFINITY;
  else if (e == 0) v = std::ldexp(static_cast<double>(f), 1 - bias - mantissa);
  else v = std::ldexp(static_cast<double>(f | (1u << mantissa)), static_cast<int>(e) - bias - mantissa);
  return static_cast<float>(sign ? -v : v);
}

inline uint16_t to_f16(float v, Rounding r = Rounding::rn) { return narrow_float(v, 5, 10, r); }
inline uint16_t to_bf16(float v, Rounding r = Rounding::rn) { return narrow_float(v, 8, 7, r); }
inline float from_f16(uint16_t h) { return widen_float(h, 5, 10); }
inline float from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// f64 -> f32 with a rounding mode (cvt.rn/rz/rm/rp.f32.f64).
inline float to_f32(double v, Rounding r) {
  const float nearest = static_cast<float>(v);
  if (r == Rounding::rn || r == Rounding::none || std::isnan(v) || static_cast<double>(nearest) == v) return nearest;
  const bool above = static_cast<double>(nearest) > v;
  const float down = above ? std::nextafter(nearest, -INFINITY) : nearest;
  const float up = above ? nearest : std::nextafter(nearest, INFINITY);
  switch (r) {
    case Rounding::rz: return v < 0 ? up : down;
    case Rounding::rm: return down;
    case Rounding::rp: return up;
    default: return nearest;
  }
}

// Flush a subnormal f32 to a zero of the same sign (.ftz).
inline float flush(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }

}  // namespace kgen::emu
