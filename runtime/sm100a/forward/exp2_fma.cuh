// 2^x on the FMA pipe instead of MUFU.EX2. The softmax of a 128 x 128 tile needs 16K
// exponentials, and the MUFU unit does 16 per clock per SM partition against the FMA pipe's
// 128: FlashAttention-4 computes part of them this way so that MUFU is not the bottleneck.
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace sm100a {

// x = n + f with n = floor(x): adding 1.5 * 2^23 rounding down leaves n in the low mantissa
// bits; 2^f for f in [0, 1) by a cubic fitted for the least maximum relative error (8.6e-5,
// well below the rounding of a 16-bit P); n is added to the exponent field as an integer.
// Exactly 0 below 2^-126 (masked scores are -inf).
CUTE_DEVICE float exp2_fma(float x) {
  constexpr float kShift = 12582912.f;  // 1.5 * 2^23: its ulp is 1
  const float clamped = fmaxf(x, -126.f);
  const float shifted = __fadd_rd(clamped, kShift);  // kShift + floor(x), exactly
  const float f = clamped - (shifted - kShift);
  const float p = fmaf(fmaf(fmaf(7.70651996e-02f, f, 2.27647007e-01f), f, 6.95116341e-01f), f, 1.f);
  const int n = __float_as_int(shifted) - __float_as_int(kShift);
  const float result = __int_as_float(__float_as_int(p) + n * (1 << 23));
  return x < -126.f ? 0.f : result;
}

}  // namespace sm100a
}  // namespace kgen
