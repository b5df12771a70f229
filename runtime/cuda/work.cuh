// What one CTA of a CUDA forward kernel computes: a (batch, q head, q block) and the kv tiles
// the block plan lists for it (docs/sm90a-kernel.md, "Masks: the block plan in the kernel").
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace cuda {

struct CtaWork {
  int batch;
  int head;
  int q_block;
  int tile_begin;     // the first entry of the list in the plan's kTileKv
  int tile_count;     // the list's tiles: partial first, then full
  int partial_count;  // the first partial_count tiles are masked
};

// The work of (x, rank): x = batch * q_heads + head (heads of one kv group side by side),
// rank the q block's place in the plan's q block order (heaviest first). One list per
// (plan row, q block): plan rows are 1 when every head shares one mask, else one per q head.
template <class Config>
CUTE_DEVICE CtaWork work_at(int x, int rank) {
  CtaWork work;
  work.head = x % Config::kQHeads;
  work.batch = x / Config::kQHeads;
  work.q_block = Config::q_block_order(rank);
  const int list = (Config::kPlanRows == 1 ? 0 : work.head) * Config::kQBlocks + work.q_block;
  work.tile_begin = Config::tile_begin(list);
  work.tile_count = Config::tile_begin(list + 1) - work.tile_begin;
  work.partial_count = Config::tile_partial_count(list);
  return work;
}

// One CTA per work item: grid x = batch * q_heads + head, y = rank of the q block.
template <class Config>
CUTE_DEVICE CtaWork cta_work() {
  return work_at<Config>(int(blockIdx.x), int(blockIdx.y));
}

// Work item `item` of a persistent kernel, numbered rank-major: every (batch, head) of the
// heaviest q block first.
template <class Config>
CUTE_DEVICE CtaWork work_item(int item) {
  constexpr int kRows = Config::kBatch * Config::kQHeads;
  return work_at<Config>(item % kRows, item / kRows);
}

}  // namespace cuda
}  // namespace kgen
