// What one CTA of a CUDA forward kernel computes: a (batch, q head, q block) and the kv tiles
// the block plan lists for it (docs/sm90a-kernel.md, "Masks: the block plan in the kernel"),
// less the tiles across documents where the kernel has segment ids (cuda/document_tiles.cuh).
#pragma once

#include <cstdint>

#include <cute/config.hpp>

#include "cuda/document_tiles.cuh"

namespace kgen {
namespace cuda {

struct CtaWork {
  int batch;
  int head;
  int q_block;
  int tile_begin;               // the first entry of the list in the plan's kTileKv
  int tile_count;               // the tiles walked: partial first, then full
  int partial_count;            // the first partial_count tiles are masked
  int compare_end;              // tiles before it compare segment ids; the rest lie in one document
  const int32_t* live_entries;  // the walked tiles' entries (document skips), else nullptr
};

// The entry (into the plan's kTileKv and kTileMaskIndex) of the work item's t-th tile.
template <class Config>
CUTE_DEVICE int tile_entry(CtaWork const& work, int t) {
  if constexpr (Config::SegmentMask::kSkipsDocuments) {
    return __ldg(work.live_entries + t);
  } else {
    return work.tile_begin + t;
  }
}

// The work of (x, rank): x = batch * q_heads + head (heads of one kv group side by side),
// rank the q block's place in the plan's q block order (heaviest first). One list per
// (plan row, q block): plan rows are 1 when every head shares one mask, else one per q head.
// With document skips, the list is the one the pre-pass wrote for this batch row into
// params.document_tiles.
template <class Config, class Params>
CUTE_DEVICE CtaWork work_at(Params const& params, int x, int rank) {
  CtaWork work;
  work.head = x % Config::kQHeads;
  work.batch = x / Config::kQHeads;
  work.q_block = Config::q_block_order(rank);
  const int list = (Config::kPlanRows == 1 ? 0 : work.head) * Config::kQBlocks + work.q_block;
  work.tile_begin = Config::tile_begin(list);
  if constexpr (Config::SegmentMask::kSkipsDocuments) {
    using Tiles = DocumentTiles<Config>;
    const int32_t* counts = params.document_tiles + Tiles::counts(work.batch, list);
    work.tile_count = __ldg(counts + 0);
    work.partial_count = __ldg(counts + 1);
    work.compare_end = __ldg(counts + 2);
    work.live_entries = params.document_tiles + Tiles::entries(work.batch) + work.tile_begin;
  } else {
    work.tile_count = Config::tile_begin(list + 1) - work.tile_begin;
    work.partial_count = Config::tile_partial_count(list);
    work.compare_end = work.tile_count;
    work.live_entries = nullptr;
  }
  return work;
}

// One CTA per work item: grid x = batch * q_heads + head, y = rank of the q block.
template <class Config, class Params>
CUTE_DEVICE CtaWork cta_work(Params const& params) {
  return work_at<Config>(params, int(blockIdx.x), int(blockIdx.y));
}

// Work item `item` of a persistent kernel, numbered rank-major: every (batch, head) of the
// heaviest q block first.
template <class Config, class Params>
CUTE_DEVICE CtaWork work_item(Params const& params, int item) {
  constexpr int kRows = Config::kBatch * Config::kQHeads;
  return work_at<Config>(params, item % kRows, item / kRows);
}

}  // namespace cuda
}  // namespace kgen
