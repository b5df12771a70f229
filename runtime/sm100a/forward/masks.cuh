// Mask policies for the partial tiles of the block plan (docs/sm100a-kernel.md, "Masks"):
// masked scores become -inf. Full tiles are never masked, and a block plan without partial
// tiles has no mask code at all. A softmax thread holds one row i of a tile, its keys
// col_first + c in s[c] (tmem.cuh).
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace sm100a {

// No partial tile in the block plan.
struct NoMask {
  static constexpr bool kMasksPartialTiles = false;
};

// The mask as a predicate of query row i and key j, Config::mask_allows(i, j).
template <class Config>
struct PredicateMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Row>
  CUTE_DEVICE static void apply(Row& s, int /*tile*/, int /*tile_row*/, int i, int col_first) {
    CUTE_UNROLL
    for (int c = 0; c < Config::kBlockKv; ++c) {
      if (!Config::mask_allows(i, col_first + c)) s[c] = -INFINITY;
    }
  }
};

// The tile's precomputed bits decide: Config::mask_bits() holds every distinct partial tile,
// block b, row r, word w (kMaskWords per row) with key 32 w + k of the tile in bit k, and
// Config::tile_mask_index(tile) gives a tile of the plan its block (the sm90a tables).
template <class Config>
struct BitmaskMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Row>
  CUTE_DEVICE static void apply(Row& s, int tile, int tile_row, int /*i*/, int /*col_first*/) {
    constexpr int kWords = Config::kMaskWords;
    const uint32_t* row_bits = Config::mask_bits() +
                               int64_t(Config::tile_mask_index(tile)) * (Config::kBlockQ * kWords) +
                               tile_row * kWords;
    CUTE_UNROLL
    for (int w = 0; w < kWords; ++w) {
      const uint32_t word = __ldg(row_bits + w);
      CUTE_UNROLL
      for (int k = 0; k < 32 && 32 * w + k < Config::kBlockKv; ++k) {
        if (((word >> k) & 1u) == 0) s[32 * w + k] = -INFINITY;
      }
    }
  }
};

}  // namespace sm100a
}  // namespace kgen
