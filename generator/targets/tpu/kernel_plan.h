// The tpu target's kernel plan: the Splash-style Mosaic kernel's operands, types,
// constants and mask predicate, as the context of templates/tpu/forward/kernel.mlir.tmpl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"
#include "targets/tpu/mosaic_text.h"

namespace kgen {

// The tile schedule of the tpu target (Splash's MaskInfo) at the spec's tiling.
SplashPlan tpu_splash_plan(const Spec& spec);

// For a spec whose tiling passed the tpu target's check_tiling.
KernelPlan plan_tpu_kernel(const Spec& spec);

// The window of an operand of a kernel walking the forward's plan (the forward, dq): its
// index map kind, one of by_q_block, by_kv_block, q_ids, kv_ids, partial_mask, whole.
TpuWindow forward_walk_window(const TpuOperand& op);
const std::vector<std::string>& forward_walk_window_kinds();

// Every operand of the kernel for `spec`, given its block plan.
std::vector<TpuOperand> tpu_operands(const Spec& spec, const SplashPlan& plan);

// The -0.7 * float32 max Splash uses for masked logits: finite, so exp() of a masked
// logit minus the running max is 0 without producing NaN.
float tpu_mask_value();

}  // namespace kgen
