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

// Grid: x = batch * q_heads + head (heads of one kv group run side by side), y = rank of the
// q block, heaviest first (the plan's q block order). One list per (plan row, q block): plan
// rows are 1 when every head shares one mask, else one per q head.
template <class Config>
CUTE_DEVICE CtaWork cta_work() {
  CtaWork work;
  work.head = int(blockIdx.x) % Config::kQHeads;
  work.batch = int(blockIdx.x) / Config::kQHeads;
  work.q_block = Config::q_block_order(blockIdx.y);
  const int list = (Config::kPlanRows == 1 ? 0 : work.head) * Config::kQBlocks + work.q_block;
  work.tile_begin = Config::tile_begin(list);
  work.tile_count = Config::tile_begin(list + 1) - work.tile_begin;
  work.partial_count = Config::tile_partial_count(list);
  return work;
}

}  // namespace cuda
}  // namespace kgen
