// What the CUDA forward plans (sm90a, sm100a) share: the block plan's tables as the kernel
// reads them (tile lists, launch order, the partial tiles' bitmask or predicate), the
// optional operands, the score constants, the launcher header and the audit interface. Each
// architecture adds its own keys (its atoms, warp roles and register split) to the context
// and names its kernel template.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"
#include "targets/tiling_rules.h"

namespace kgen {

// The generated tables are source text in a reviewed file: at most 4 Mi words (16 MiB) of
// mask bits and 4 Mi tile-list entries; the tiling rules refuse tilings that need more.
constexpr int64_t kCudaMaxMaskWords = int64_t{1} << 22;
constexpr int64_t kCudaMaxTileEntries = int64_t{1} << 22;

// The bits of every distinct partial tile, deduplicated by content, and per tile of `lists`
// (partial tiles first, then full, as the kernel walks them) its index into them (-1 when full).
struct CudaMaskTable {
  int64_t words_per_row = 0;           // ceil(block_kv / 32)
  std::vector<uint32_t> bits;          // [block][block_q][words_per_row]
  int64_t blocks = 0;
  std::vector<int32_t> tile_block;     // per entry of the flattened lists
  bool too_large = false;              // more than kCudaMaxMaskWords: incomplete
};
// Stops with too_large set once the bits pass kCudaMaxMaskWords.
CudaMaskTable cuda_mask_table(const HeadMasks& masks, const KvBlockLists& lists);

// Entries of the flattened tile lists: every live tile of every list.
int64_t cuda_tile_entries(const KvBlockLists& lists);

// The forward's table rules: at most kCudaMaxTileEntries tiles, at most kCudaMaxMaskWords of
// distinct partial-tile bits.
void add_forward_table_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules);

// The device a CUDA forward kernel is built for, as its launcher checks and names it.
struct CudaDevice {
  const char* target;        // "sm90a"
  const char* architecture;  // "Hopper (sm_90a)", in the launcher header's first line
  const char* device;        // "sm_90a (H100/H200)", in the launcher's refusal
  int major;                 // compute capability
  int minor;
};

// Tensor-core products of one tile: one per 16-deep step of S = Q K^T (head_dim / 16) and of
// O += P V (block_kv / 16), on sm90a (HGMMA) and sm100a (UTCHMMA) alike.
int64_t cuda_products_per_tile(int64_t head_dim, int64_t block_kv);

// TMA boxes of one K or V tile of `features` columns: one per 128-byte swizzle atom column,
// as the runtime's shared-memory layouts repeat their atoms down the tile's positions first
// (runtime/sm90a/forward/kernel_traits.cuh), so each column is one box of every position.
int64_t cuda_tma_boxes_per_tile(int64_t features, DType dtype);

// Adds to a plan's schedule promise (when it makes one) whole-tile K and V loads:
// cuda_tma_boxes_per_tile boxes of each per tile (every forward, and sm90a's decode over a
// contiguous cache).
void promise_whole_tile_loads(KernelPlan& kernel, const Spec& spec);

// The plan every CUDA forward kernel starts from: its context (shape, tiles, tables, masks,
// score constants, operands, launch device), its launcher header and its audit interface,
// with `threads` threads and `shared_bytes` of dynamic shared memory. The caller sets the
// template and adds its architecture's keys. Its schedule promise: the main loop issues
// cuda_products_per_tile products an iteration (none when no tile is live: the compiler drops
// them all) and loads whole K and V tiles (promise_whole_tile_loads). Not the softmax between
// the wgmma waits: how much of it ptxas keeps differs by kernel, from none to all (issue 29;
// docs/sm90a-kernel.md, "What moves ptxas's wait").
KernelPlan plan_cuda_forward(const Spec& spec, const GpuTarget& gpu, const CudaDevice& device, int64_t threads,
                             int64_t shared_bytes);

}  // namespace kgen
