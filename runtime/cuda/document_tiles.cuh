// Tiles skipped across documents in the CUDA forward kernels (docs/block-plan.md, "Tiles
// skipped across documents"). Before the forward, a pre-pass kernel on the same stream reduces
// the segment ids of each q block and of each kv block of the block plan's lists to their
// ranges, classifies every listed tile by the one rule (cuda/document_step.h), and writes per
// (batch row, list) the tiles the forward walks: the partial tiles that are not dead (masked,
// ids compared), then the full tiles that compare ids, then the full tiles inside one document
// (no comparison). Dead tiles are in no list: their K and V are never loaded. Every role of the
// forward reads its work item's list from there (cuda/work.cuh).
//
// The workspace (int32, the launcher's Arguments::document_tiles), per batch row: the counts of
// each list {tiles, partial tiles, end of the comparing tiles}, then the entries (indices into
// the plan's kTileKv) of list l from the list's own kTileBegin[l] on.
#pragma once

#include <cstdint>

#include <cute/config.hpp>

#include "cuda/document_step.h"

namespace kgen {
namespace cuda {

template <class Config>
struct DocumentTiles {
  static constexpr int kLists = Config::kPlanRows * Config::kQBlocks;
  static constexpr int64_t kIntsPerBatch = 3 * kLists + Config::kTileEntries;
  static constexpr int64_t kInts = Config::kBatch * kIntsPerBatch;
  // The pre-pass: one CTA of kThreads per (list, batch row).
  static constexpr int kThreads = 128;

  // Where list `list` of batch row `batch` keeps its three counts, and where its batch row's
  // entries start.
  CUTE_HOST_DEVICE static int64_t counts(int batch, int list) {
    return batch * kIntsPerBatch + 3 * list;
  }
  CUTE_HOST_DEVICE static int64_t entries(int batch) { return batch * kIntsPerBatch + 3 * kLists; }
};

// The range of ids[first, end) in every lane of the warp.
CUTE_DEVICE IdRange warp_id_range(const int32_t* ids, int first, int end, int lane) {
  IdRange range{INT32_MAX, INT32_MIN};
  for (int p = first + lane; p < end; p += 32) {
    const int32_t id = __ldg(ids + p);
    range.min = min(range.min, id);
    range.max = max(range.max, id);
  }
  CUTE_UNROLL
  for (int offset = 16; offset > 0; offset /= 2) {
    range.min = min(range.min, __shfl_xor_sync(0xffffffffu, range.min, offset));
    range.max = max(range.max, __shfl_xor_sync(0xffffffffu, range.max, offset));
  }
  return range;
}

// The pre-pass's CTA (blockIdx.x: list, blockIdx.y: batch row), kThreads threads: from
// params.q_segment_ids and kv_segment_ids into params.document_tiles.
template <class Config, class Params>
CUTE_DEVICE void document_tiles(Params const& params) {
  using Tiles = DocumentTiles<Config>;
  constexpr int kWarps = Tiles::kThreads / 32;
  __shared__ IdRange q_range;
  __shared__ DocumentStep steps[Config::kKvBlocks];  // a list holds each kv block at most once
  const int list = int(blockIdx.x);
  const int batch = int(blockIdx.y);
  const int warp = int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  const int begin = Config::tile_begin(list);
  const int count = Config::tile_begin(list + 1) - begin;
  const int partial = Config::tile_partial_count(list);

  if (warp == 0) {
    const int first = (list % Config::kQBlocks) * Config::kBlockQ;
    const IdRange range = warp_id_range(params.q_segment_ids + int64_t(batch) * Config::kQLen,
                                        first, min(first + Config::kBlockQ, Config::kQLen), lane);
    if (lane == 0) q_range = range;
  }
  __syncthreads();
  const int32_t* kv_ids = params.kv_segment_ids + int64_t(batch) * Config::kKvLen;
  for (int t = warp; t < count; t += kWarps) {
    const int first = Config::tile_kv(begin + t) * Config::kBlockKv;
    const IdRange range =
        warp_id_range(kv_ids, first, min(first + Config::kBlockKv, Config::kKvLen), lane);
    if (lane == 0) steps[t] = document_step(q_range, range);
  }
  __syncthreads();

  // One thread writes the list in the order the forward walks it (at most kKvBlocks entries).
  if (threadIdx.x == 0) {
    int32_t* entries = params.document_tiles + Tiles::entries(batch) + begin;
    int n = 0;
    for (int t = 0; t < partial; ++t)
      if (steps[t] != DocumentStep::kDead) entries[n++] = begin + t;
    const int partial_live = n;
    for (int t = partial; t < count; ++t)
      if (steps[t] == DocumentStep::kCompare) entries[n++] = begin + t;
    const int compare_end = n;
    for (int t = partial; t < count; ++t)
      if (steps[t] == DocumentStep::kOneDocument) entries[n++] = begin + t;
    int32_t* counts = params.document_tiles + Tiles::counts(batch, list);
    counts[0] = n;
    counts[1] = partial_live;
    counts[2] = compare_end;
  }
}

}  // namespace cuda
}  // namespace kgen
