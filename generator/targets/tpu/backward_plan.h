// The tpu target's backward kernels (docs/backward.md): the dq kernel walks the forward's
// block plan, the dkv kernel Splash's dkv plan, both at the backward tiles. Their operands,
// types, constants and mask predicates, as the contexts of templates/tpu/backward/.
#pragma once

#include <cstdint>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"
#include "targets/target.h"
#include "targets/tpu/mosaic_text.h"

namespace kgen {

// One backward kernel as its caller and the verifier see it: the plan it prefetches, its
// grid and its operands in argument order.
struct TpuBackwardKernel {
  SplashPlan plan;
  std::vector<int64_t> grid;  // dq [batch, heads, q blocks, kv steps]; dkv [batch, kv blocks, heads, q steps]
  std::vector<TpuOperand> operands;
};

// For a spec with "backward": true whose backward `tiles` passed check_backward_tiling;
// `pass` is kDq or kDkv.
TpuBackwardKernel tpu_backward_kernel(const Spec& spec, const Tiling& tiles, PlanPass pass);

// The dq and the dkv kernel, in that order.
std::vector<KernelPlan> plan_tpu_backward_kernels(const Spec& spec, const Tiling& tiles);

}  // namespace kgen
