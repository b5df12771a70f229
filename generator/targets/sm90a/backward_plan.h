// The sm90a target's backward plan (docs/sm90a-backward.md): the FlashAttention-3-style
// backward's tiles, the transposed block plan it walks (per kv block, the q blocks that see
// it, partial first), its wgmma atoms, score constants and masks, as the contexts of
// templates/sm90a/backward/kernel.cu.tmpl and launcher.h.tmpl.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "memory_budget.h"
#include "spec.h"

namespace kgen {

// Why the sm90a backward has no kernel for this spec (its head dimensions), or nothing.
std::optional<std::string> sm90a_backward_unsupported(const Spec& spec);

// How the consumer warpgroups of one 64-row kv slot share its gradients' columns. One holds
// all of dK and dV in f32 registers while head_dim + head_dim_v <= 256; above, two do, both
// computing the slot's S and dP, each over a window of whole 64-column groups of dK (and
// dQ) and of dV: part 0's from column 0, part 1's against the right edge. Both windows have
// one width, so one body serves both parts; where they overlap (192 columns: windows of 128)
// part 0's values are the ones stored, and dQ is added only for columns a part owns
// (docs/sm90a-backward.md, "Head dims above 128").
struct Sm90aBackwardParts {
  int64_t count = 1;
  int64_t dk_width = 0;  // columns of dK (and dQ) per part
  int64_t dv_width = 0;  // columns of dV per part
};
Sm90aBackwardParts sm90a_backward_parts(const Shape& shape);

// The tiles when the spec sets none: one 64-row q tile per step and two consumer
// warpgroups: 128 kv rows, or 64 when two share a slot's columns.
constexpr int64_t kSm90aBackwardBlockQ = 64;
int64_t sm90a_default_backward_block_kv(const Shape& shape);

// The forward's tile lists turned around: per (plan row, kv block) the q blocks whose tile
// with it is partial, then those whose tile is full, each in increasing order.
struct QBlockLists {
  TileShape tiles;
  int64_t rows = 0;
  std::vector<std::vector<int32_t>> partial;  // [row * kv_blocks + kv block]
  std::vector<std::vector<int32_t>> full;
};
QBlockLists transpose_block_lists(const KvBlockLists& lists);

// The bits of every distinct partial tile of `lists`, transposed (block_kv rows of block_q
// bits), deduplicated by content, and per entry of the flattened lists its block (-1: full).
struct TransposedMaskTable {
  int64_t words_per_row = 0;  // ceil(block_q / 32)
  std::vector<uint32_t> bits;  // [block][block_kv][words_per_row]
  int64_t blocks = 0;
  std::vector<int32_t> entry_block;
};
TransposedMaskTable transposed_mask_table(const HeadMasks& masks, const QBlockLists& lists);

// Shared memory of the main kernel at tiles `target` (docs/sm90a-backward.md): K and V of the
// kv block, a two-stage Q and dO ring, one 64 x 64 dS tile per consumer warpgroup, and the
// mbarriers.
MemoryBudget sm90a_backward_smem_budget(const Spec& spec, const GpuTarget& target);

// Bytes of the caller's f32 workspace: the dq accumulator and lse, delta per (padded) q row.
int64_t sm90a_backward_workspace_bytes(const Spec& spec, const GpuTarget& tiles);

// For a spec whose backward tiles passed the target's rules.
KernelPlan plan_sm90a_backward_kernel(const Spec& spec, const GpuTarget& tiles);

}  // namespace kgen
