// Segment ids (docs/spec-format.md, "Top-level keys"): a key is kept only when its segment is
// the query's. They are run-time data, so the test runs on every tile, full or partial.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace sm100a {

// No segment ids: every key is in the query's segment.
struct NoSegmentMask {
  static constexpr bool kMasks = false;

  template <class Params>
  CUTE_DEVICE NoSegmentMask(Params const&, int /*batch*/, int /*i*/) {}
};

// Each softmax thread reads its row's query segment once; every tile reads the keys' (the
// same addresses across a warp: one broadcast load each).
template <class Config>
struct SegmentMask {
  static constexpr bool kMasks = true;

  const int32_t* kv_segment_ids;  // this batch's row of kv_segment_ids
  int q_segment;

  template <class Params>
  CUTE_DEVICE SegmentMask(Params const& params, int batch, int i)
      : kv_segment_ids(params.kv_segment_ids + int64_t(batch) * Config::kKvLen),
        q_segment(i < Config::kQLen
                      ? __ldg(params.q_segment_ids + int64_t(batch) * Config::kQLen + i)
                      : 0) {}

  template <class Row>
  CUTE_DEVICE void apply(Row& s, int col_first) const {
    CUTE_UNROLL
    for (int c = 0; c < Config::kBlockKv; ++c) {
      const int j = col_first + c;
      // Keys past kv_len (the ragged last block) are the block plan's to mask.
      const int kv_segment = j < Config::kKvLen ? __ldg(kv_segment_ids + j) : q_segment;
      if (kv_segment != q_segment) s[c] = -INFINITY;
    }
  }
};

}  // namespace sm100a
}  // namespace kgen
