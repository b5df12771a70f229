// Segment ids (docs/spec-format.md, "Top-level keys"): a key is kept only when its segment is
// the query's. They are run-time data, so the test runs on every tile, full or partial.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

// No segment ids: every key is in the query's segment.
struct NoSegmentMask {
  static constexpr bool kMasks = false;

  template <class Params>
  CUTE_DEVICE NoSegmentMask(Params const&, int /*batch*/, int /*row_base*/) {}
};

// Each thread reads its two rows' query segments once; every tile reads the keys' segments.
template <class Config>
struct SegmentMask {
  static constexpr bool kMasks = true;

  const int32_t* kv_segment_ids;  // this batch's row of kv_segment_ids
  int q_segment[2];

  // `row_base`: the thread's first query row (the second is row_base + 8).
  template <class Params>
  CUTE_DEVICE SegmentMask(Params const& params, int batch, int row_base)
      : kv_segment_ids(params.kv_segment_ids + int64_t(batch) * Config::kKvLen) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int i = row_base + 8 * r;
      q_segment[r] =
          i < Config::kQLen ? __ldg(params.q_segment_ids + int64_t(batch) * Config::kQLen + i) : 0;
    }
  }

  // Keys of another segment than the query's become -inf. Keys past kv_len are masked by the
  // partial-tile mask already; they read no segment id.
  template <class Fragment>
  CUTE_DEVICE void apply(Fragment& s, int col_first) const {
    CUTE_UNROLL
    for (int n = 0; n < Config::kBlockKv / 8; ++n) {
      CUTE_UNROLL
      for (int c = 0; c < 2; ++c) {
        const int j = col_first + c + 8 * n;
        const int kv_segment = j < Config::kKvLen ? __ldg(kv_segment_ids + j) : q_segment[0];
        CUTE_UNROLL
        for (int r = 0; r < 2; ++r) {
          if (kv_segment != q_segment[r]) s(c + 2 * r + 4 * n) = -INFINITY;
        }
      }
    }
  }
};

}  // namespace sm90a
}  // namespace kgen
