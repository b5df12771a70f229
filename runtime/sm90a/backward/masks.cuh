// The masks of the backward's transposed score tiles (docs/sm90a-backward.md, "Masks"): a
// thread's rows are kv positions j, its columns q positions i, in the forward's fragment
// indexing (forward/wgmma.cuh). Masked scores become -inf; full tiles are never masked.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

// No partial tile in the block plan.
struct NoTransposedMask {
  static constexpr bool kMasksPartialTiles = false;
};

// Config::mask_allows(i, j) on the thread's scores of a partial tile.
template <class Config>
struct TransposedPredicateMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment>
  CUTE_DEVICE static void apply(Fragment& s, int /*entry*/, int /*tile_row_base*/, int row_base,
                                int col_first) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int j = row_base + 8 * r;
      CUTE_UNROLL
      for (int n = 0; n < Config::kBlockQ / 8; ++n) {
        CUTE_UNROLL
        for (int c = 0; c < 2; ++c) {
          if (!Config::mask_allows(col_first + c + 8 * n, j)) s(c + 2 * r + 4 * n) = -INFINITY;
        }
      }
    }
  }
};

// The tile's precomputed bits, transposed: Config::mask_bits() holds every distinct partial
// tile, block b, kv row r, word w (kMaskWords per row) with query 32 w + k of the tile in bit
// k; Config::step_mask_index(entry) gives a step its block. A thread's columns
// 2 (lane % 4) + c + 8 n sit in word n / 4 at bit 2 (lane % 4) + 8 (n % 4) + c.
template <class Config>
struct TransposedBitmaskMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment>
  CUTE_DEVICE static void apply(Fragment& s, int entry, int tile_row_base, int /*row_base*/,
                                int col_first) {
    constexpr int kWords = Config::kMaskWords;
    const int lane_shift = col_first % 8;  // 2 (lane % 4): q tiles start at multiples of 64
    const uint32_t* block =
        Config::mask_bits() + int64_t(Config::step_mask_index(entry)) * (Config::kBlockKv * kWords);
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const uint32_t* row_bits = block + (tile_row_base + 8 * r) * kWords;
      CUTE_UNROLL
      for (int w = 0; w < kWords; ++w) {
        const uint32_t word = __ldg(row_bits + w) >> lane_shift;
        CUTE_UNROLL
        for (int n = 4 * w; n < 4 * w + 4; ++n) {
          CUTE_UNROLL
          for (int c = 0; c < 2; ++c) {
            if (((word >> (8 * (n % 4) + c)) & 1u) == 0) s(c + 2 * r + 4 * n) = -INFINITY;
          }
        }
      }
    }
  }
};

// No segment ids.
struct NoTransposedSegmentMask {
  static constexpr bool kMasks = false;

  template <class Params>
  CUTE_DEVICE NoTransposedSegmentMask(Params const&, int /*batch*/, int /*row_base*/) {}
};

// Each thread reads its two kv rows' segments once; every step reads its queries' segments.
template <class Config>
struct TransposedSegmentMask {
  static constexpr bool kMasks = true;

  const int32_t* q_segment_ids;  // this batch's row of q_segment_ids
  int kv_segment[2];

  // `row_base`: the thread's first kv row (the second is row_base + 8). Rows past kv_len are
  // masked by the partial-tile mask; they read no segment id.
  template <class Params>
  CUTE_DEVICE TransposedSegmentMask(Params const& params, int batch, int row_base)
      : q_segment_ids(params.q_segment_ids + int64_t(batch) * Config::kQLen) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int j = row_base + 8 * r;
      kv_segment[r] = j < Config::kKvLen
                          ? __ldg(params.kv_segment_ids + int64_t(batch) * Config::kKvLen + j)
                          : -1;
    }
  }

  // Queries of another segment than the key's become -inf. Queries past q_len have p = 0
  // already (their lse is +inf in the workspace); they read no segment id.
  template <class Fragment>
  CUTE_DEVICE void apply(Fragment& s, int col_first) const {
    CUTE_UNROLL
    for (int n = 0; n < Config::kBlockQ / 8; ++n) {
      CUTE_UNROLL
      for (int c = 0; c < 2; ++c) {
        const int i = col_first + c + 8 * n;
        const int q_segment = i < Config::kQLen ? __ldg(q_segment_ids + i) : kv_segment[0];
        CUTE_UNROLL
        for (int r = 0; r < 2; ++r) {
          if (q_segment != kv_segment[r]) s(c + 2 * r + 4 * n) = -INFINITY;
        }
      }
    }
  }
};

}  // namespace sm90a
}  // namespace kgen
