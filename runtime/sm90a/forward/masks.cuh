// Mask policies for the partial tiles of the block plan (docs/sm90a-kernel.md, "Masks"):
// masked scores become -inf. Full tiles are never masked, and a block plan without partial
// tiles has no mask code at all. Fragment indexing: wgmma.cuh.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

// No partial tile in the block plan.
struct NoMask {
  static constexpr bool kMasksPartialTiles = false;
};

// The mask as a predicate of query row i and key j, Config::mask_allows(i, j), evaluated on
// the thread's scores of a partial tile.
template <class Config>
struct PredicateMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment>
  CUTE_DEVICE static void apply(Fragment& s, int /*tile*/, int /*tile_row_base*/, int row_base,
                                int col_first) {
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int i = row_base + 8 * r;
      CUTE_UNROLL
      for (int n = 0; n < Config::kBlockKv / 8; ++n) {
        CUTE_UNROLL
        for (int c = 0; c < 2; ++c) {
          if (!Config::mask_allows(i, col_first + c + 8 * n)) s(c + 2 * r + 4 * n) = -INFINITY;
        }
      }
    }
  }
};

// The tile's precomputed bits decide: Config::mask_bits() holds every distinct partial tile,
// block b, row r, word w (kMaskWords per row) with key 32 w + k of the tile in bit k, and
// Config::tile_mask_index(tile) gives a tile of the plan its block. A thread's columns
// 2 (lane % 4) + c + 8 n sit in word n / 4 at bit 2 (lane % 4) + 8 (n % 4) + c.
template <class Config>
struct BitmaskMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment>
  CUTE_DEVICE static void apply(Fragment& s, int tile, int tile_row_base, int /*row_base*/,
                                int col_first) {
    constexpr int kWords = Config::kMaskWords;
    const int lane_shift = col_first % 8;  // 2 (lane % 4): tiles start at multiples of 16 keys
    const uint32_t* block =
        Config::mask_bits() + int64_t(Config::tile_mask_index(tile)) * (Config::kBlockQ * kWords);
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
      const uint32_t* row_bits = block + (tile_row_base + 8 * r) * kWords;
      CUTE_UNROLL
      for (int w = 0; w < kWords; ++w) {
        const uint32_t word = __ldg(row_bits + w) >> lane_shift;
        CUTE_UNROLL
        for (int n = 4 * w; n < 4 * w + 4 && n < Config::kBlockKv / 8; ++n) {
          CUTE_UNROLL
          for (int c = 0; c < 2; ++c) {
            if (((word >> (8 * (n % 4) + c)) & 1u) == 0) s(c + 2 * r + 4 * n) = -INFINITY;
          }
        }
      }
    }
  }
};

}  // namespace sm90a
}  // namespace kgen
