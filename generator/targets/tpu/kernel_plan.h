// The tpu target's kernel plan: the Splash-style Mosaic kernel's operands, types,
// constants and mask predicate, as the context of templates/tpu/forward/kernel.mlir.tmpl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"

namespace kgen {

// One operand of the generated Mosaic kernel, in kernel argument order.
struct TpuOperand {
  enum class Role { kScalarPrefetch, kInput, kOutput, kScratch };
  std::string name;
  Role role;
  std::string element_type;      // MLIR spelling: bf16, f16, f32, i32
  std::vector<int64_t> shape;    // the full array (for scratch: the buffer)
  std::vector<int64_t> block;    // the window; empty for scalar prefetch and scratch
  std::string memory_space;      // smem or vmem
};

// The tile schedule of the tpu target (Splash's MaskInfo) at the spec's tiling.
SplashPlan tpu_splash_plan(const Spec& spec);

// For a spec whose tiling passed the tpu target's check_tiling.
KernelPlan plan_tpu_kernel(const Spec& spec);

// Every operand of the kernel for `spec`, given its block plan.
std::vector<TpuOperand> tpu_operands(const Spec& spec, const SplashPlan& plan);

// The -0.7 * float32 max Splash uses for masked logits: finite, so exp() of a masked
// logit minus the running max is 0 without producing NaN.
float tpu_mask_value();

}  // namespace kgen
