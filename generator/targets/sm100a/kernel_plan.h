// The sm100a target's kernel plan: the FlashAttention-4-class CUTLASS/CuTe forward kernel's
// warp roles and register split, tensor-memory map and tcgen05 atoms, over the plan every CUDA
// forward shares (targets/cuda/forward_plan.h), as the context of
// templates/sm100a/forward/kernel.cu.tmpl (docs/sm100a-kernel.md).
#pragma once

#include <cstdint>

#include "kernel_plans.h"
#include "spec.h"

namespace kgen {

// One 128-row tcgen05 tile per work item: a tensor-memory lane per q row.
constexpr int64_t kSm100aBlockQ = 128;
// Softmax, correction, and the MMA/load warpgroup.
constexpr int64_t kSm100aThreads = 384;
// Persistent CTAs: one per SM of a B200 (148) at most, each walking every 148th work item.
// On a part with fewer SMs the CTAs beyond its count run as a second wave: correct, slower;
// a spec may cap the grid lower ("targets.sm100a.persistent_ctas", docs/spec-format.md §5).
constexpr int64_t kSm100aPersistentCtas = 148;

// Registers per thread of each warpgroup after the role split (setmaxnreg); 128 threads each
// share the SM's 64K registers: softmax + correction + other <= 512. The softmax holds a row
// of S (block_kv f32); the correction 32 columns of O at a time; the MMA warp every
// shared-memory descriptor of a tile.
struct Sm100aRegisterSplit {
  int softmax;
  int correction;
  int other;
};
constexpr Sm100aRegisterSplit kSm100aRegisters{256, 128, 128};

// Tensor-memory columns the CTA allocates: two S buffers (block_kv each; P over their upper
// halves) and O (head_dim_v), rounded up to the power of 2 tcgen05.alloc takes (32 at least).
int64_t sm100a_tmem_columns(int64_t block_kv, int64_t head_dim_v);

// tcgen05.mma instructions per kv tile: head_dim / 16 for S = Q K^T and block_kv / 16 for
// O += P V (16 elements of K per instruction for 16-bit inputs). Every instruction has one
// issue site, so the SASS holds exactly this many UTCHMMA.
int64_t sm100a_mma_per_tile(int64_t head_dim, int64_t block_kv);

// The persistent grid: the work items, one per (batch, head, q block), and the CTAs that
// walk them, min(work items, the spec's persistent_ctas or kSm100aPersistentCtas).
struct Sm100aPersistentGrid {
  int64_t work_items;
  int64_t ctas;
};
Sm100aPersistentGrid sm100a_persistent_grid(const Spec& spec);

KernelPlan plan_sm100a_kernel(const Spec& spec);

}  // namespace kgen
