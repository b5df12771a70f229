#include "memory_budget.h"

#include <algorithm>

#include "block_plan.h"
#include "spec.h"
#include "targets/tpu/generations.h"

namespace kgen {

int64_t MemoryBudget::total() const {
  int64_t sum = 0;
  for (const auto& item : items) sum += item.second;
  return sum;
}

namespace {

constexpr int64_t kBuffers = 2;  // Mosaic double-buffers every moving window
constexpr int64_t kF32 = 4, kI32 = 4;

// The q, k and v windows every tpu kernel reads.
MemoryBudget qkv_windows(const Spec& spec, const TpuTarget& target) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  MemoryBudget budget;
  budget.items = {
      {"q block", kBuffers * target.block_q * d * e},
      {"k block", kBuffers * target.block_kv * d * e},
      {"v block", kBuffers * target.block_kv * dv * e},
  };
  return budget;
}

// The partial-mask and segment-id windows, when the spec has them.
void add_mask_windows(const Spec& spec, const TpuTarget& target, MemoryBudget& budget) {
  const int64_t bq = target.block_q, bkv = target.block_kv;
  if (partial_tile_mask(spec.masks, /*has_partial_tiles=*/true) == PartialTileMask::kBitmask)
    budget.items.push_back({"partial mask block (i32)", kBuffers * bq * bkv * kI32});
  if (spec.segment_ids)
    budget.items.push_back({"segment id blocks", kBuffers * (bq * kTpuLanes + 8 * bkv) * kI32});
}

// What the two backward kernels share: every input window and the score temporaries.
MemoryBudget tpu_backward_inputs(const Spec& spec, const TpuTarget& target) {
  const int64_t bq = target.block_q;
  MemoryBudget budget = qkv_windows(spec, target);
  budget.items.push_back({"out, dout blocks", 2 * kBuffers * bq * spec.shape.head_dim_v * dtype_bytes(spec.dtype)});
  budget.items.push_back({"lse block (lane-replicated)", kBuffers * bq * kTpuLanes * kF32});
  budget.items.push_back({"s, p, dp, ds temporaries", 4 * bq * target.block_kv_compute * kF32});
  add_mask_windows(spec, target, budget);
  return budget;
}

}  // namespace

MemoryBudget tpu_vmem_budget(const Spec& spec, const TpuTarget& target) {
  const int64_t bq = target.block_q, dv = spec.shape.head_dim_v;
  MemoryBudget budget = qkv_windows(spec, target);
  budget.items.push_back({"out block", kBuffers * bq * dv * dtype_bytes(spec.dtype)});
  budget.items.push_back({"m, l scratch (block_q x 128)", 2 * bq * kTpuLanes * kF32});
  budget.items.push_back({"acc scratch", bq * dv * kF32});
  budget.items.push_back({"s, p temporaries", 2 * bq * target.block_kv_compute * kF32});
  if (spec.lse) budget.items.push_back({"lse block", kBuffers * bq * kTpuLanes * kF32});
  add_mask_windows(spec, target, budget);
  return budget;
}

MemoryBudget tpu_decode_vmem_budget(const Spec& spec, const TpuTarget& target, int64_t splits) {
  const int64_t e = dtype_bytes(spec.dtype), rows = spec.shape.group() * spec.shape.q_len;
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v, bkv = target.block_kv;
  const int64_t out_bytes = splits > 1 ? kF32 : e;
  MemoryBudget budget;
  budget.items = {
      {"q tile", kBuffers * rows * d * e},
      {"k block", kBuffers * bkv * d * e},
      {"v block", kBuffers * bkv * dv * e},
      {splits > 1 ? "out_s block (f32)" : "out block", kBuffers * rows * dv * out_bytes},
      {"m, l scratch (lane-replicated)", 2 * rows * kTpuLanes * kF32},
      {"acc scratch", rows * dv * kF32},
      // The kv block's scores, logits and p (f32), and a sub-tile of values zeroed past kv_lens.
      {"score temporaries", 3 * rows * bkv * kF32 + target.block_kv_compute * dv * e},
  };
  if (splits > 1 || spec.lse) budget.items.push_back({"lse block (lane-replicated)", kBuffers * rows * kTpuLanes * kF32});
  if (spec.sinks && splits == 1) budget.items.push_back({"sinks (row-replicated)", kBuffers * rows * kTpuLanes * kF32});
  return budget;
}

MemoryBudget tpu_dkv_vmem_budget(const Spec& spec, const TpuTarget& target) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t bkv = target.block_kv, d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  MemoryBudget budget = tpu_backward_inputs(spec, target);
  budget.items.push_back({"dk, dv blocks", kBuffers * bkv * (d + dv) * e});
  budget.items.push_back({"dk, dv scratch", bkv * (d + dv) * kF32});
  return budget;
}

MemoryBudget tpu_dq_vmem_budget(const Spec& spec, const TpuTarget& target) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t bq = target.block_q, d = spec.shape.head_dim;
  MemoryBudget budget = tpu_backward_inputs(spec, target);
  budget.items.push_back({"dq block", kBuffers * bq * d * e});
  budget.items.push_back({"dq scratch", bq * d * kF32});
  return budget;
}

MemoryBudget gpu_smem_budget(const Spec& spec, const GpuTarget& target) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  MemoryBudget budget;
  budget.items = {
      {"q tile (reused for the O store)", target.block_q * std::max(d, dv) * e},
      {"k ring", kGpuKvStages * target.block_kv * d * e},
      {"v ring", kGpuKvStages * target.block_kv * dv * e},
      {"mbarriers", 1024},
  };
  return budget;
}

MemoryBudget sm100a_smem_budget(const Spec& spec, const GpuTarget& target) {
  MemoryBudget budget = gpu_smem_budget(spec, target);
  // The tail after the 1024-byte aligned tiles (runtime/sm100a/forward/kernel_traits.cuh,
  // SharedStorage): two slots of per-row rescale factors and the output factors; the
  // mbarriers (Q full and empty; K and V full and empty per stage; S, scale and P full per S
  // buffer; O; out_scale) and the tensor-memory address; padded to 1024 bytes.
  const int64_t factors = 3 * target.block_q * kF32;
  const int64_t barriers = 8 * (2 + 4 * kGpuKvStages + 3 * 2 + 2) + 4;
  budget.items.back() = {"row factors (softmax to correction), mbarriers", (factors + barriers + 1023) / 1024 * 1024};
  return budget;
}

}  // namespace kgen
