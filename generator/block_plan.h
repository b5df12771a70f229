// The block plan (docs/spec-format.md §4): which (block_q, block_kv) tiles of each head are empty,
// partial or full, and the Splash-compatible schedule that walks only the live ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mask.h"

namespace kgen {

enum TileClass : int8_t { kEmptyTile = 0, kPartialTile = 1, kFullTile = 2 };

// A dense [rows][q_blocks][cols] array, the shape of every block-plan table.
template <typename T>
struct Table3 {
  int64_t rows = 0, q_blocks = 0, cols = 0;
  std::vector<T> values;

  Table3() = default;
  Table3(int64_t r, int64_t q, int64_t c, T fill = T{})
      : rows(r), q_blocks(q), cols(c), values(static_cast<std::size_t>(r * q * c), fill) {}
  T& at(int64_t r, int64_t q, int64_t c) { return values[static_cast<std::size_t>((r * q_blocks + q) * cols + c)]; }
  const T& at(int64_t r, int64_t q, int64_t c) const { return values[static_cast<std::size_t>((r * q_blocks + q) * cols + c)]; }
};

struct TileShape {
  int64_t q_len, kv_len, block_q, block_kv;
  int64_t q_blocks() const { return (q_len + block_q - 1) / block_q; }
  int64_t kv_blocks() const { return (kv_len + block_kv - 1) / block_kv; }
};

// Tile classes of one mask, [1][q_blocks][kv_blocks]. A tile reaching past kv_len is
// never full: the kernel must mask its tail. Rows past q_len do not exist.
Table3<int8_t> classify_tiles(const Mask& mask, const TileShape& tiles);

// How every target's kernel masks its partial tiles, decided here once (docs/block-plan.md):
// kNone when the tiling leaves no partial tile; kPredicate when every head shares one mask
// without explicit leaves, so the kernel evaluates it from positions; kBitmask otherwise, bits
// precomputed per distinct partial tile. `kgen plan` reports it for every target.
enum class PartialTileMask { kNone, kPredicate, kBitmask };
PartialTileMask partial_tile_mask(const HeadMasks& masks, bool has_partial_tiles);
const char* partial_tile_mask_name(PartialTileMask mask);  // "none", "predicate", "bitmask"

// One partial tile's bits: block_q rows of block_kv '0'/'1' characters.
using PartialBlock = std::vector<std::string>;

// Which of Splash's kernels walks a plan. The forward and the dq kernel step through the kv
// blocks of each q block (grid [heads, q blocks, kv steps]); the dkv kernel through the q
// blocks of each kv block (grid [kv blocks, heads, q steps]), so its plan is the same tile
// classification walked, and shrunk, along the other axis.
enum class SplashPass { kForward, kDkv };

// Splash Attention's MaskInfo, computed the way docs/spec-format.md §4 (forward) and §7 (dkv)
// define it. The tables are always indexed [row][q][kv], as Splash's are.
struct SplashPlan {
  SplashPass pass = SplashPass::kForward;
  TileShape tiles;
  int64_t heads = 0;            // grid heads (q_heads)
  PartialTileMask partial_mask = PartialTileMask::kNone;
  Table3<int8_t> block_mask;    // rows = 1 when all heads share one mask, else heads
  Table3<int32_t> data_next;    // forward: the kv block a step loads; dkv: the q block
  bool has_mask_next = false;   // partial_mask is kBitmask
  Table3<int32_t> mask_next;    // meaningful only when has_mask_next
  // Forward: block_q rows of block_kv bits each; dkv: transposed, block_kv rows of block_q.
  std::vector<PartialBlock> partial_blocks;
  int64_t live_tiles_per_batch = 0;  // non-empty tiles over all heads
  int64_t total_tiles_per_batch = 0;

  // Grid steps along the walked axis: kv steps per q block (forward), q steps per kv block (dkv).
  int64_t width() const { return pass == SplashPass::kForward ? block_mask.cols : block_mask.q_blocks; }
};

SplashPlan build_splash_plan(const HeadMasks& masks, int64_t heads, const TileShape& tiles,
                             SplashPass pass = SplashPass::kForward);

// The GPU view of the same classification, FlexAttention-style: per (mask row, q block)
// the partial and the full kv blocks, in increasing order.
struct KvBlockLists {
  TileShape tiles;
  int64_t rows = 0;
  std::vector<std::vector<int32_t>> partial;  // [row * q_blocks + q]
  std::vector<std::vector<int32_t>> full;
  int64_t live_tiles_per_batch = 0;
  int64_t total_tiles_per_batch = 0;
};

KvBlockLists build_kv_block_lists(const HeadMasks& masks, int64_t heads, const TileShape& tiles);

PartialTileMask partial_tile_mask(const HeadMasks& masks, const KvBlockLists& lists);

}  // namespace kgen
