// The persistent schedule of the sm100a forward (docs/sm100a-kernel.md, "Persistent CTAs"):
// kCtas CTAs, each taking work items blockIdx.x, blockIdx.x + kCtas, ... of the kWorkItems
// (cuda::work_item: heaviest q blocks first, so the round robin deals the long items out
// first). Every role walks the same items in the same order and keeps its barrier phases
// running across them: the K/V ring, S, P and O hand-offs by the CTA's tile count so far,
// Q's and the epilogue's by its count of live items (items with at least one tile). An item
// with no tile touches no barrier at all, so no role can run a phase ahead of another.
#pragma once

#include <cute/config.hpp>

#include "cuda/work.cuh"

namespace kgen {
namespace sm100a {

// Where a work item starts in the CTA's running counts.
struct ItemCounts {
  int tiles;  // tiles of the CTA's earlier items: the K/V ring's and S slots' position
  int live;   // earlier items with tiles: Q's and the epilogue's phase
};

// Calls body(work, counts) for each of the CTA's work items in order; returns the counts
// after the last. `params`: where the work items' lists are read with document skips
// (cuda/work.cuh), which every role reads alike.
template <class Config, class Params, class Body>
CUTE_DEVICE ItemCounts for_each_work_item(Params const& params, Body&& body) {
  static_assert(Config::kCtas <= Config::kWorkItems, "no CTA without work");
  static_assert(Config::kWorkItems == Config::kBatch * Config::kQHeads * Config::kQBlocks,
                "cuda::work_item numbers every (batch, head, q block) once");
  ItemCounts counts{0, 0};
  CUTE_NO_UNROLL
  for (int item = int(blockIdx.x); item < Config::kWorkItems; item += Config::kCtas) {
    const cuda::CtaWork work = cuda::work_item<Config>(params, item);
    body(work, counts);
    counts.tiles += work.tile_count;
    counts.live += work.tile_count > 0 ? 1 : 0;
  }
  return counts;
}

}  // namespace sm100a
}  // namespace kgen
