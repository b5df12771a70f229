// The backward's first kernel (docs/sm90a-backward.md, "Three kernels"): per q row, one warp
// computes delta = rowsum(dout * out) and lse in base 2 into the workspace, clears the row's dq
// accumulator and, with sinks, adds the row's share -exp(sink - lse) * delta to dsinks.
// Padding rows (q_len to kQPadded) get delta 0 and lse +inf: the main kernel's p is 0 there.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

#include "cuda/convert.cuh"
#include "cuda/exp2.cuh"
#include "sm90a/backward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

constexpr int kPreprocessThreads = 128;  // four rows per block

template <class Config, class Params>
CUTE_DEVICE void backward_preprocess(Params const& params) {
  constexpr int kHeadDim = Config::kHeadDim;
  const BackwardWorkspace<Config> workspace(params.workspace);
  const int lane = int(threadIdx.x) % 32;
  // row = (batch * q_heads + head) * kQPadded + i
  const int64_t row = int64_t(blockIdx.x) * (kPreprocessThreads / 32) + int(threadIdx.x) / 32;
  const int i = int(row % Config::kQPadded);
  const int head = int(row / Config::kQPadded % Config::kQHeads);
  const int batch = int(row / (int64_t(Config::kQPadded) * Config::kQHeads));

  float* dq_row = workspace.dq_accum + row * kHeadDim;
  for (int c = lane; c < kHeadDim; c += 32) dq_row[c] = 0.f;

  float delta = 0.f;
  float lse_log2 = INFINITY;
  if (i < Config::kQLen) {
    using Element = typename Config::Element;
    const Element* out = static_cast<const Element*>(params.out) +
                         batch * params.out_strides.batch + head * params.out_strides.head +
                         i * params.out_strides.row;
    const Element* dout = static_cast<const Element*>(params.dout) +
                          batch * params.dout_strides.batch + head * params.dout_strides.head +
                          i * params.dout_strides.row;
    for (int c = lane; c < Config::kHeadDimV; c += 32) delta += float(out[c]) * float(dout[c]);
    CUTE_UNROLL
    for (int offset = 16; offset > 0; offset /= 2)
      delta += __shfl_xor_sync(0xffffffffu, delta, offset);
    const float lse = params.lse[(int64_t(batch) * Config::kQHeads + head) * Config::kQLen + i];
    // A row that kept nothing has lse -inf: +inf makes its p = exp2(x - inf) = 0, not NaN.
    if (lse != -INFINITY) lse_log2 = lse * cuda::kLog2e;
    if constexpr (Config::kSinks) {
      if (lane == 0 && lse != -INFINITY)
        atomicAdd(params.dsinks + head, -expf(__ldg(params.sinks + head) - lse) * delta);
    }
  }
  if (lane == 0) {
    workspace.lse_log2[row] = lse_log2;
    workspace.delta[row] = delta;
  }
}

constexpr int kPostprocessThreads = 256;

// The backward's last kernel: dq = scale * the accumulator, in the element type, two columns
// per thread.
template <class Config, class Params>
CUTE_DEVICE void backward_postprocess(Params const& params) {
  using Element = typename Config::Element;
  constexpr int kPairs = Config::kHeadDim / 2;
  const BackwardWorkspace<Config> workspace(params.workspace);
  const int64_t index = int64_t(blockIdx.x) * kPostprocessThreads + threadIdx.x;
  if (index >= int64_t(Config::kBatch) * Config::kQHeads * Config::kQLen * kPairs) return;
  const int pair = int(index % kPairs);
  const int64_t row = index / kPairs;  // (batch * q_heads + head) * q_len + i
  const int i = int(row % Config::kQLen);
  const int head = int(row / Config::kQLen % Config::kQHeads);
  const int batch = int(row / (int64_t(Config::kQLen) * Config::kQHeads));
  const float2 acc = reinterpret_cast<const float2*>(
      workspace.dq_accum +
      ((int64_t(batch) * Config::kQHeads + head) * Config::kQPadded + i) * Config::kHeadDim)[pair];
  Element* dq = static_cast<Element*>(params.dq) + batch * params.dq_strides.batch +
                head * params.dq_strides.head + i * params.dq_strides.row + 2 * pair;
  const float scaled[2] = {acc.x * Config::kScale, acc.y * Config::kScale};
  cuda::convert_to_element<Element, 2>(scaled, dq);  // even strides: the pair is 4-byte aligned
}

}  // namespace sm90a
}  // namespace kgen
