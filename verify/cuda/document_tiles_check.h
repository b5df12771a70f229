// The document pre-pass of a CUDA forward kernel with segment ids (runtime/cuda/
// document_tiles.cuh), checked on the host: its workspace, read back after the run, must hold
// exactly the lists the block plan and the rule (runtime/cuda/document_step.h) give for the
// run's segment ids -- the tiles the forward's CTAs walk -- and the counts say how many of the
// plan's tiles that skips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec.h"

namespace kgen::sm90a {

// Tiles of every CTA (each (batch row, q head, q block)), summed over the grid.
struct DocumentTileCounts {
  int64_t planned = 0;       // the block plan's tiles
  int64_t walked = 0;        // those the kernel walks
  int64_t one_document = 0;  // walked full tiles inside one document: no comparison
  int64_t dead() const { return planned - walked; }
};

// The workspace the pre-pass must write for these ids, laid out as the runtime's: per batch
// row three counts per list ({tiles, partial tiles, compare end}), then the entries (indices
// into the flattened lists) of each list from its own begin; `written` marks the ints it writes
// (the rest of an entries range stays as it was).
struct DocumentTilesExpected {
  std::vector<int32_t> ints;
  std::vector<char> written;
  DocumentTileCounts counts;
};
DocumentTilesExpected expected_document_tiles(const Spec& spec, const std::string& target,
                                              const std::vector<int32_t>& q_segment_ids,
                                              const std::vector<int32_t>& kv_segment_ids);

// "" when `actual` holds every written int of `expected`, else the first difference.
std::string compare_document_tiles(const DocumentTilesExpected& expected, const std::vector<int32_t>& actual);

}  // namespace kgen::sm90a
