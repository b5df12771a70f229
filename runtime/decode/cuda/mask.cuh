// The mask policy of a decode kernel (docs/decode.md, "The problem"): row r of the q tile is
// new token r % q_len (rows are q head-major), at position kv_len - q_len + r % q_len, and sees
// the keys at or before it (and, with a window, no more than kWindowLeft before it). Keys at or
// past kv_len are never seen, so the tail of the cache hides behind the same test. Like every
// policy of cuda/masks.cuh it reads coordinates through the tile's view (cuda/score_tile.cuh):
// the tile's queries are q tile rows, its keys cache positions.
//
// Config: kQLen, kBlockKv, kWindowLeft (-1 without a window).
#pragma once

#include <cmath>

#include <cute/config.hpp>

#include "cuda/score_tile.cuh"

namespace kgen {
namespace cuda {

template <class Config>
struct DecodeMask {
  int kv_len;  // the sequence's valid positions

  // True when some key of block `kv_block` is hidden from some row: a key past the first
  // token's position (the last block or blocks), or one left of the last token's window.
  CUTE_DEVICE bool masks(int kv_block) const {
    const int first_key = kv_block * Config::kBlockKv;
    if (first_key + Config::kBlockKv - 1 > kv_len - Config::kQLen) return true;
    if constexpr (Config::kWindowLeft >= 0) return first_key < kv_len - 1 - Config::kWindowLeft;
    return false;
  }

  template <class Fragment, class Tile>
  CUTE_DEVICE void apply(Fragment& s, Tile const& tile) const {
    using View = typename Tile::View;
    CUTE_UNROLL
    for (int r = 0; r < View::kRows; ++r) {
      const int position = kv_len - Config::kQLen + tile.query(r, 0) % Config::kQLen;
      CUTE_UNROLL
      for (int c = 0; c < View::kColumns; ++c) {
        const int key = tile.key(r, c);
        bool hidden = key > position;
        if constexpr (Config::kWindowLeft >= 0)
          hidden = hidden || key < position - Config::kWindowLeft;
        if (hidden) s(View::index(r, c)) = -INFINITY;
      }
    }
  }
};

}  // namespace cuda
}  // namespace kgen
