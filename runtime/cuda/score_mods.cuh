// Score modifiers: what turns a raw score q.k into the score domain x the softmax works in
// (scale and softcap in docs/spec-format.md, "Top-level keys"; docs/sm90a-kernel.md,
// "Softmax in exp2"), for every CUDA kernel, forward and backward. The scale is folded into Config::kExp2Scale, so
// exp(s - s_max) = exp2(kExp2Scale * (x - x_max)).
#pragma once

#include <cute/config.hpp>
#include <cute/tensor.hpp>

#include "cuda/exp2.cuh"

namespace kgen {
namespace cuda {

// x = q.k, unscaled: nothing to do.
struct NoScoreMod {
  static constexpr bool kModifies = false;

  // ds / d(q.k) = scale: no factor besides it (the backward's).
  CUTE_DEVICE static float derivative(float /*x*/) { return 1.f; }
};

// tanh to about 1e-7 absolute as 1 - 2 / (1 + 2^(2 log2(e) x)): one MUFU.EX2, one MUFU.RCP,
// and exactly +-1 for large |x|. Not tanh.approx (2^-11 relative): the softcap multiplies
// tanh's error by the cap, which would put lse ~0.02 off for a cap of 50 (tolerance 1e-3).
CUTE_DEVICE float softcap_tanh(float x) {
  return 1.f - __fdividef(2.f, 1.f + fast_exp2(x * 2.88539008f));
}

// x = tanh(Config::kTanhScale * q.k) = tanh(scale * q.k / softcap); s = softcap * x, with the
// softcap folded into kExp2Scale.
template <class Config>
struct Softcap {
  static constexpr bool kModifies = true;

  // ds / d(q.k) = scale * (1 - x^2): the backward's factor besides the scale. A masked score
  // (x = -inf) gives 0, not -inf, so that p = 0 times it stays 0.
  CUTE_DEVICE static float derivative(float x) {
    x = fmaxf(x, -1.f);
    return 1.f - x * x;
  }

  template <class Fragment>
  CUTE_DEVICE static void apply(Fragment& s) {
    CUTE_UNROLL
    for (int e = 0; e < cute::size(s); ++e) s(e) = softcap_tanh(s(e) * Config::kTanhScale);
  }
};

}  // namespace cuda
}  // namespace kgen
