// exp2 on the MUFU unit and the constants between e and 2 that every CUDA kernel's softmax
// uses (its scores are kept in exp2's domain; docs/sm90a-kernel.md, "Softmax in exp2").
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace cuda {

constexpr float kLog2e = 1.44269504e+00f;
constexpr float kLn2 = 6.93147182e-01f;

// ex2.approx: one MUFU.EX2; exp2(-inf) = 0.
CUTE_DEVICE float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace cuda
}  // namespace kgen
