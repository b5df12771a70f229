// The sm90a target's kernel plan: the FlashAttention-3-class CUTLASS/CuTe forward kernel's
// consumer warpgroups, register split and wgmma atoms, over the plan every CUDA forward
// shares (targets/cuda/forward_plan.h), as the context of templates/sm90a/forward/kernel.cu.tmpl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"

namespace kgen {

// How the kernel's consumer warpgroups split the 64K registers of an SM with the producer
// warpgroup (setmaxnreg after the role split), by consumer count: 1, 2 or 3.
struct Sm90aRegisterSplit {
  int producer;
  int consumer;
};
Sm90aRegisterSplit sm90a_register_split(int64_t consumers);

// An estimate of the registers one consumer thread needs: the f32 S and O accumulators, P
// in the element type, with segment ids the key segment ids of a tile (ptxas loads them
// all ahead of the comparisons), and a fixed allowance for addresses, statistics and the
// mask. The target rules refuse tilings whose estimate exceeds the consumer's registers:
// ptxas would spill them. Calibrated on ptxas 13.0 (docs/sm90a-kernel.md).
int64_t sm90a_consumer_register_estimate(int64_t block_kv, int64_t head_dim_v, bool segment_ids);

KernelPlan plan_sm90a_kernel(const Spec& spec);

}  // namespace kgen
