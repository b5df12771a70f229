// Scalar helpers of the softmax: exp2 on the MUFU unit and reductions over the four lanes
// (a quad) that hold one accumulator row.
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

constexpr float kLog2e = 1.44269504e+00f;
constexpr float kLn2 = 6.93147182e-01f;

// ex2.approx: one MUFU.EX2; exp2(-inf) = 0.
CUTE_DEVICE float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

CUTE_DEVICE float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

CUTE_DEVICE float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace sm90a
}  // namespace kgen
