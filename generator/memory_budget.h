// Working sets of the generated kernels, itemized so `kgen explain` can show them and the
// targets' tiling rules can refuse specs that do not fit: every tpu kernel's VMEM and the
// CUDA forward kernels' shared memory. The sm90a backward's shared memory depends on how its
// warpgroups split the head dims and lives with that plan (targets/sm90a/backward_plan.cc).
// Each CUDA budget models its runtime's SharedStorage, which holds itself to the budget
// (runtime/<target>/forward/kernel_traits.cuh, a static_assert).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kgen {

struct Spec;
struct TpuTarget;
struct GpuTarget;

struct MemoryBudget {
  std::vector<std::pair<std::string, int64_t>> items;  // what, bytes
  int64_t total() const;
};

// VMEM of the Splash-style forward kernel: double-buffered q/k/v/out (and mask, segment
// id, lse) blocks, the m/l/acc scratch, and the f32 temporaries of one compute sub-tile.
MemoryBudget tpu_vmem_budget(const Spec& spec, const TpuTarget& target);

// VMEM of the tpu decode kernel at `splits` (docs/decode.md): its q tile (the group's q heads
// times the new tokens), double-buffered k and v blocks, the out (or out_s) and lse (or lse_s)
// windows, the m/l/acc scratch, and the f32 score temporaries of one kv block.
MemoryBudget tpu_decode_vmem_budget(const Spec& spec, const TpuTarget& target, int64_t splits);

// VMEM of the tpu backward kernels at tiles `target` (docs/tpu-backward.md). Both take q, k, v,
// out and dout windows (each computes delta = rowsum(dout * out) of its q block itself) and
// lse, and hold four f32 (block_q, block_kv_compute) temporaries (s, p, dp, ds). The dkv kernel
// adds its dk, dv windows and f32 accumulators; the dq kernel its dq window and accumulator.
MemoryBudget tpu_dkv_vmem_budget(const Spec& spec, const TpuTarget& target);
MemoryBudget tpu_dq_vmem_budget(const Spec& spec, const TpuTarget& target);

// Shared memory of the Hopper/Blackwell forward kernel: Q once (reused to stage O for
// the TMA store), a two-stage K/V ring, and the mbarriers.
MemoryBudget gpu_smem_budget(const Spec& spec, const GpuTarget& target);

// Shared memory of the sm100a forward kernel: the Hopper/Blackwell items and the per-row
// factors its softmax warpgroup hands to its correction warpgroup (docs/sm100a-kernel.md).
MemoryBudget sm100a_smem_budget(const Spec& spec, const GpuTarget& target);

constexpr int64_t kGpuSmemLimit = 227 * 1024;  // per block, sm90a and sm100a
constexpr int64_t kGpuKvStages = 2;

}  // namespace kgen
