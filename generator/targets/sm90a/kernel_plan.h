// The sm90a target's kernel plan: the FlashAttention-3-class CUTLASS/CuTe forward kernel's
// tiling, register split, wgmma atoms, score constants, mask code and block-plan tables, as
// the contexts of templates/sm90a/forward/kernel.cu.tmpl and templates/sm90a/forward/launcher.h.tmpl.
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

// The generated tables are source text in a reviewed file: at most 4 Mi words (16 MiB) of
// mask bits and 4 Mi tile-list entries; check_tiling refuses tilings that need more.
constexpr int64_t kSm90aMaxMaskWords = int64_t{1} << 22;
constexpr int64_t kSm90aMaxTileEntries = int64_t{1} << 22;

// The bits of every distinct partial tile, deduplicated by content, and per tile of `lists`
// (partial tiles first, then full, as the kernel walks them) its index into them (-1 when full).
struct Sm90aMaskTable {
  int64_t words_per_row = 0;           // ceil(block_kv / 32)
  std::vector<uint32_t> bits;          // [block][block_q][words_per_row]
  int64_t blocks = 0;
  std::vector<int32_t> tile_block;     // per entry of the flattened lists
  bool too_large = false;              // more than kSm90aMaxMaskWords: incomplete
};
// Stops with too_large set once the bits pass kSm90aMaxMaskWords.
Sm90aMaskTable sm90a_mask_table(const HeadMasks& masks, const KvBlockLists& lists);

// Entries of the flattened tile lists: every live tile of every list.
int64_t sm90a_tile_entries(const KvBlockLists& lists);

KernelPlan plan_sm90a_kernel(const Spec& spec);

}  // namespace kgen
