// The online softmax of one consumer thread's two accumulator rows (docs/sm90a-kernel.md,
// "Softmax in exp2"): running max and sum in the score domain x, the scores of a tile turned
// into exp2(kExp2Scale * (x - max)), and the factor by which O's rows must be rescaled.
#pragma once

#include <cmath>

#include <cute/config.hpp>
#include <cute/tensor.hpp>

#include "cuda/exp2.cuh"
#include "sm90a/forward/math.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct OnlineSoftmax {
  // Rows r = 0, 1 of the thread, quad-replicated.
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};  // this thread's columns only; summed over the quad at the end

  // s: the masked scores of one tile in the score domain; they become probabilities
  // (unnormalized), and `correction` the factor the rows of O must be multiplied by.
  template <class Fragment>
  CUTE_DEVICE void update(Fragment& s, float (&correction)[2]) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      float tile_max = row_max[r];
      CUTE_UNROLL
      for (int n = 0; n < Config::kBlockKv / 8; ++n) {
        tile_max = fmaxf(tile_max, fmaxf(s(2 * r + 4 * n), s(1 + 2 * r + 4 * n)));
      }
      tile_max = quad_max(tile_max);
      // A row with nothing kept so far keeps max -inf; exp2 then sees -inf - 0 = -inf -> 0.
      const float max_scaled = tile_max == -INFINITY ? 0.f : tile_max * Config::kExp2Scale;
      correction[r] = cuda::fast_exp2(row_max[r] * Config::kExp2Scale - max_scaled);
      row_max[r] = tile_max;
      float sum = 0.f;
      CUTE_UNROLL
      for (int n = 0; n < Config::kBlockKv / 8; ++n) {
        CUTE_UNROLL
        for (int c = 0; c < 2; ++c) {
          float& x = s(c + 2 * r + 4 * n);
          x = cuda::fast_exp2(x * Config::kExp2Scale - max_scaled);
          sum += x;
        }
      }
      row_sum[r] = row_sum[r] * correction[r] + sum;
    }
  }
};

// Multiplies the rows of an accumulator fragment (64 x N, N / 8 column groups) by `factor`.
template <class Fragment>
CUTE_DEVICE void scale_rows(Fragment& o, float const (&factor)[2]) {
  CUTE_UNROLL
  for (int n = 0; n < int(cute::size(o)) / 4; ++n) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      o(2 * r + 4 * n) *= factor[r];
      o(1 + 2 * r + 4 * n) *= factor[r];
    }
  }
}

}  // namespace sm90a
}  // namespace kgen
