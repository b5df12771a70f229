// Reductions over the four lanes (a quad) that hold one accumulator row of a wgmma.
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

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
