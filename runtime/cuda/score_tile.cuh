// A thread's part of one score tile, seen through the layout of the registers that hold it:
// what every mask policy of every CUDA kernel reads (cuda/masks.cuh), so that a policy is
// written once and a kernel with another register layout brings only a view.
//
// A View describes where a thread's registers sit in the tile. The thread holds kRows rows
// and kColumns columns of the tile, every (row, column) pair of them in a register of its own:
//   kRows, kColumns         the thread's rows and columns of the tile
//   index(r, c)             the fragment index of the register of row r and column c
//   row(r), column(c)       their coordinates in the tile, from 0
//   column_base,            column(c) = column_base + column_offset(c): the thread's part
//   column_offset(c)        (at most kMaxColumnBase) and the register's (a compile-time
//   kMaxColumnBase          constant), with no column_base + column_offset(c) % 32 past 31:
//                           the 32-column word of a column is then the register's alone
// The views: sm90a/wgmma.cuh (a wgmma accumulator: two rows, a quarter of the columns) and
// sm100a/forward/tmem.cuh (a tensor-memory lane: one row, every column).
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace cuda {

// True when every column of the view lies in the 32-column word of its register's offset,
// at bit column_base + column_offset(c) % 32, whatever the thread's column base.
template <class View>
constexpr bool columns_keep_their_word() {
  for (int c = 0; c < View::kColumns; ++c) {
    if (View::kMaxColumnBase + View::column_offset(c) % 32 > 31) return false;
  }
  return true;
}

// What a score tile's rows are: queries for S = Q K^T (the forward), keys for S^T = K Q^T
// (the sm90a backward, which walks kv blocks).
enum class TileRows { kQueries, kKeys };

// One tile of scores as a thread holds it. kTileRows: the rows of the whole tile (the CTA's
// block, whose precomputed mask bits are kTileRows rows of words).
template <class View_, TileRows kRowsAre_, int kTileRows_>
struct ScoreTile {
  using View = View_;
  static constexpr TileRows kRowsAre = kRowsAre_;
  static constexpr int kTileRows = kTileRows_;

  View view;
  int row_origin;     // the query (or key) position of the tile's row 0
  int column_origin;  // the key (or query) position of its column 0
  int entry;          // the tile's entry in the block plan's tables

  // The query and key positions of the register of row r and column c.
  CUTE_DEVICE int query(int r, int c) const {
    return kRowsAre == TileRows::kQueries ? row_origin + view.row(r)
                                          : column_origin + view.column(c);
  }
  CUTE_DEVICE int key(int r, int c) const {
    return kRowsAre == TileRows::kQueries ? column_origin + view.column(c)
                                          : row_origin + view.row(r);
  }
};

}  // namespace cuda
}  // namespace kgen
