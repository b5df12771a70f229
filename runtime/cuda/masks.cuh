// The mask policies of every CUDA kernel (docs/sm90a-kernel.md, "Masks"): masked scores
// become -inf. Each reads a register's query and key through the tile's view
// (cuda/score_tile.cuh), so one policy serves the sm90a forward (S in a wgmma accumulator),
// the sm90a backward (S^T in one) and the sm100a forward (a row of S per thread).
//
// Partial tiles of the block plan (Config::Mask): NoMask, PredicateMask or BitmaskMask. Full
// tiles are never masked, and a block plan without partial tiles has no mask code at all.
// Segment ids (Config::SegmentMask): NoSegmentMask or SegmentMask, on every tile.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/config.hpp>

#include "cuda/score_tile.cuh"

namespace kgen {
namespace cuda {

// A tile of a kernel's walk as the masks see it, a type: each of a kernel's loops runs tiles of
// one kind, so none carries a branch on it. A partial tile takes the plan's mask and the ids'
// comparison, a full tile the comparison alone, a full tile inside one document neither
// (cuda/document_tiles.cuh). Without segment ids, the comparison is no code at all.
template <bool kPartialTile, bool kComparesIds>
struct TileKind {
  static constexpr bool kPartial = kPartialTile;
  static constexpr bool kCompares = kComparesIds;
};
using PartialTile = TileKind<true, true>;
using FullTile = TileKind<false, true>;
using OneDocumentTile = TileKind<false, false>;

// No partial tile in the block plan.
struct NoMask {
  static constexpr bool kMasksPartialTiles = false;
};

// The mask as a predicate of query i and key j, Config::mask_allows(i, j).
template <class Config>
struct PredicateMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment, class Tile>
  CUTE_DEVICE static void apply(Fragment& s, Tile const& tile) {
    using View = typename Tile::View;
    CUTE_UNROLL
    for (int r = 0; r < View::kRows; ++r) {
      CUTE_UNROLL
      for (int c = 0; c < View::kColumns; ++c) {
        if (!Config::mask_allows(tile.query(r, c), tile.key(r, c)))
          s(View::index(r, c)) = -INFINITY;
      }
    }
  }
};

// The tile's precomputed bits decide: Config::mask_bits() holds every distinct partial tile,
// block b, tile row r, word w (Config::kMaskWords per row) with column 32 w + k of the tile in
// bit k, and Config::tile_mask_index(entry) gives an entry of the plan its block. Rows and
// columns are the tile's own (the backward's blocks are of S^T: kv rows, q columns).
template <class Config>
struct BitmaskMask {
  static constexpr bool kMasksPartialTiles = true;

  template <class Fragment, class Tile>
  CUTE_DEVICE static void apply(Fragment& s, Tile const& tile) {
    using View = typename Tile::View;
    static_assert(columns_keep_their_word<View>(), "a register's bit is base + a constant");
    constexpr int kWords = Config::kMaskWords;
    const uint32_t* block = Config::mask_bits() + int64_t(Config::tile_mask_index(tile.entry)) *
                                                      (Tile::kTileRows * kWords);
    CUTE_UNROLL
    for (int r = 0; r < View::kRows; ++r) {
      const uint32_t* row_bits = block + tile.view.row(r) * kWords;
      // Each word of the row once (the compiler does not merge repeated __ldg), shifted by the
      // thread's column base; then the bit of each register in it, at a compile-time offset.
      CUTE_UNROLL
      for (int w = 0; w < kWords; ++w) {
        const uint32_t word = __ldg(row_bits + w) >> tile.view.column_base;
        CUTE_UNROLL
        for (int c = 0; c < View::kColumns; ++c) {
          const int offset = View::column_offset(c);
          if (offset / 32 == w && ((word >> (offset % 32)) & 1u) == 0)
            s(View::index(r, c)) = -INFINITY;
        }
      }
    }
  }
};

// No segment ids: every key is in the query's segment.
struct NoSegmentMask {
  static constexpr bool kSkipsDocuments = false;
  template <class Tile>
  struct Rows {
    static constexpr bool kMasks = false;

    template <class Params, class View>
    CUTE_DEVICE Rows(Params const&, int /*batch*/, View const&, int /*row_origin*/) {}
  };
};

// Segment ids (docs/spec-format.md, "Top-level keys"): a key is kept only when its segment is
// the query's. They are run-time data: the forward walks only the tiles whose documents can
// meet and tests the ids on every one of them but the full tiles inside one document
// (cuda/document_tiles.cuh); the backward tests them on every tile.
template <class Config>
struct SegmentMask {
  static constexpr bool kSkipsDocuments = true;
  // A thread's rows of every tile of a work item (their origin does not move): their segment
  // ids are read once; each tile reads its columns' (the same addresses across a quad or a
  // warp: broadcast loads).
  template <class Tile>
  struct Rows {
    static constexpr bool kMasks = true;
    using View = typename Tile::View;
    static constexpr bool kRowsAreQueries = Tile::kRowsAre == TileRows::kQueries;
    static constexpr int kRowLen = kRowsAreQueries ? Config::kQLen : Config::kKvLen;
    static constexpr int kColumnLen = kRowsAreQueries ? Config::kKvLen : Config::kQLen;

    const int32_t* column_ids;  // this batch's segment ids of the columns' positions
    int row_segment[View::kRows];

    template <class Params>
    CUTE_DEVICE Rows(Params const& params, int batch, View const& view, int row_origin)
        : column_ids((kRowsAreQueries ? params.kv_segment_ids : params.q_segment_ids) +
                     int64_t(batch) * kColumnLen) {
      const int32_t* row_ids = (kRowsAreQueries ? params.q_segment_ids : params.kv_segment_ids) +
                               int64_t(batch) * kRowLen;
      CUTE_UNROLL
      for (int r = 0; r < View::kRows; ++r) {
        const int position = row_origin + view.row(r);
        row_segment[r] = position < kRowLen ? __ldg(row_ids + position) : -1;
      }
    }

    // Positions past a length read no segment id and are not masked here: keys past kv_len
    // are the block plan's partial tiles to mask, and a row or a backward column past q_len
    // is never stored (its p is 0).
    template <class Fragment>
    CUTE_DEVICE void apply(Fragment& s, Tile const& tile) const {
      CUTE_UNROLL
      for (int c = 0; c < View::kColumns; ++c) {
        const int position = tile.column_origin + tile.view.column(c);
        if (position < kColumnLen) {
          const int column_segment = __ldg(column_ids + position);
          CUTE_UNROLL
          for (int r = 0; r < View::kRows; ++r) {
            if (column_segment != row_segment[r]) s(View::index(r, c)) = -INFINITY;
          }
        }
      }
    }
  };
};

}  // namespace cuda
}  // namespace kgen
