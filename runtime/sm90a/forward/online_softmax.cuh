// The online softmax of one consumer thread's rows of S (docs/sm90a-kernel.md, "Softmax in
// exp2"): running max and sum in the score domain x, the scores of a tile turned into
// exp2(kExp2Scale * (x - max)), and the factor by which O's rows must be rescaled. Rows and
// columns are the accumulator view's (sm90a/wgmma.cuh); a row's columns are spread over a
// quad of lanes.
#pragma once

#include <cmath>

#include <cute/config.hpp>
#include <cute/tensor.hpp>

#include "cuda/exp2.cuh"
#include "sm90a/forward/math.cuh"
#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct OnlineSoftmax {
  using View = AccumulatorView<Config::kBlockKv>;
  static constexpr int kRows = View::kRows;

  // The thread's rows, quad-replicated.
  float row_max[kRows] = {-INFINITY, -INFINITY};
  float row_sum[kRows] = {0.f, 0.f};  // this thread's columns only; summed over the quad at the end

  // s: the masked scores of one tile in the score domain; they become probabilities
  // (unnormalized), and `correction` the factor the rows of O must be multiplied by.
  template <class Fragment>
  CUTE_DEVICE void update(Fragment& s, float (&correction)[kRows]) {
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float tile_max = row_max[r];
      CUTE_UNROLL
      for (int c = 0; c < View::kColumns; c += 2) {
        tile_max = fmaxf(tile_max, fmaxf(s(View::index(r, c)), s(View::index(r, c + 1))));
      }
      tile_max = quad_max(tile_max);
      // A row with nothing kept so far keeps max -inf; exp2 then sees -inf - 0 = -inf -> 0.
      const float max_scaled = tile_max == -INFINITY ? 0.f : tile_max * Config::kExp2Scale;
      correction[r] = cuda::fast_exp2(row_max[r] * Config::kExp2Scale - max_scaled);
      row_max[r] = tile_max;
      float sum = 0.f;
      CUTE_UNROLL
      for (int c = 0; c < View::kColumns; ++c) {
        float& x = s(View::index(r, c));
        x = cuda::fast_exp2(x * Config::kExp2Scale - max_scaled);
        sum += x;
      }
      row_sum[r] = row_sum[r] * correction[r] + sum;
    }
  }
};

// Multiplies the rows of an accumulator fragment (64 x N: N / 2 values a thread) by `factor`.
template <class Fragment>
CUTE_DEVICE void scale_rows(Fragment& o, float const (&factor)[2]) {
  using View = AccumulatorView<2 * int(decltype(cute::size(o))::value)>;
  CUTE_UNROLL
  for (int c = 0; c < View::kColumns; ++c) {
    CUTE_UNROLL
    for (int r = 0; r < View::kRows; ++r) o(View::index(r, c)) *= factor[r];
  }
}

}  // namespace sm90a
}  // namespace kgen
