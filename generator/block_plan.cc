#include "block_plan.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace kgen {
namespace {

// Adds the allowed columns of one row to per-kv-block coverage counts.
void add_row_coverage(const IntervalSet& row, int64_t block_kv, std::vector<int64_t>& coverage) {
  for (const Interval& run : row) {
    for (int64_t c = run.begin / block_kv; c * block_kv < run.end; ++c) {
      const int64_t begin = std::max(run.begin, c * block_kv);
      const int64_t end = std::min(run.end, (c + 1) * block_kv);
      coverage[static_cast<std::size_t>(c)] += end - begin;
    }
  }
}

PartialBlock tile_bits(const Mask& mask, const TileShape& tiles, int64_t qb, int64_t kb) {
  PartialBlock block;
  for (int64_t r = 0; r < tiles.block_q; ++r) {
    std::string bits(static_cast<std::size_t>(tiles.block_kv), '0');
    const int64_t i = qb * tiles.block_q + r;
    if (i < tiles.q_len) {
      const int64_t first = kb * tiles.block_kv;
      for (const Interval& run : mask.row(i, tiles.kv_len)) {
        const int64_t begin = std::max(run.begin, first);
        const int64_t end = std::min(run.end, first + tiles.block_kv);
        for (int64_t j = begin; j < end; ++j) bits[static_cast<std::size_t>(j - first)] = '1';
      }
    }
    block.push_back(std::move(bits));
  }
  return block;
}

// Flat indices of a [rows][q][kv] table in the order `pass`'s grid visits them: row-major for
// the forward; for the dkv pass kv block outermost, then row, then q block (Splash's dkv grid
// is [kv blocks, heads, q steps]).
std::vector<int64_t> walk_order(const Table3<int8_t>& classes, SplashPass pass) {
  std::vector<int64_t> walk;
  walk.reserve(classes.values.size());
  if (pass == SplashPass::kForward) {
    for (int64_t step = 0; step < static_cast<int64_t>(classes.values.size()); ++step) walk.push_back(step);
    return walk;
  }
  for (int64_t c = 0; c < classes.cols; ++c)
    for (int64_t r = 0; r < classes.rows; ++r)
      for (int64_t q = 0; q < classes.q_blocks; ++q) walk.push_back((r * classes.q_blocks + q) * classes.cols + c);
  return walk;
}

// The table a step of the grid reads for the tile it loads: for every grid step, the
// value at the first step at or after it in `walk` (wrapping around to the very first)
// whose tile is selected; 0 everywhere when no tile is selected.
template <typename Select, typename Value>
Table3<int32_t> next_selected(const Table3<int8_t>& classes, const std::vector<int64_t>& walk, Select selected,
                              Value value) {
  Table3<int32_t> next(classes.rows, classes.q_blocks, classes.cols, 0);
  auto is_selected = [&](int64_t step) { return selected(classes.values[static_cast<std::size_t>(step)]); };
  const auto first = std::find_if(walk.begin(), walk.end(), is_selected);
  if (first == walk.end()) return next;
  int64_t upcoming = *first;  // after the last selected step, the walk wraps to the first
  for (auto step = walk.rbegin(); step != walk.rend(); ++step) {
    if (is_selected(*step)) upcoming = *step;
    next.values[static_cast<std::size_t>(*step)] = value(upcoming);
  }
  return next;
}

// Grid shrinking, for a plan of one row: the walked axis keeps only its non-empty tiles, in
// order, padded with zeros to the longest (Splash pads data_next and mask_next with 0, not
// with the next block). The forward pads each q block's kv steps at the end; the dkv pass pads
// each kv block's q steps at the start, so that its last step, which writes dk and dv, is live.
void shrink(SplashPlan& plan) {
  const Table3<int8_t>& classes = plan.block_mask;
  const bool forward = plan.pass == SplashPass::kForward;
  const int64_t lines = forward ? classes.q_blocks : classes.cols;  // q blocks, or kv blocks
  const int64_t length = forward ? classes.cols : classes.q_blocks;
  auto at = [&](auto& table, int64_t line, int64_t k) -> auto& {
    return forward ? table.at(0, line, k) : table.at(0, k, line);
  };
  std::vector<std::vector<int64_t>> live(static_cast<std::size_t>(lines));
  int64_t width = 1;  // a mask with no live tile at all still runs one step per line, to write zeros
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t k = 0; k < length; ++k)
      if (at(classes, line, k) != kEmptyTile) live[static_cast<std::size_t>(line)].push_back(k);
    width = std::max<int64_t>(width, static_cast<int64_t>(live[static_cast<std::size_t>(line)].size()));
  }
  auto gather = [&](const auto& table) {
    std::decay_t<decltype(table)> out = forward ? std::decay_t<decltype(table)>(1, lines, width, 0)
                                                : std::decay_t<decltype(table)>(1, width, lines, 0);
    for (int64_t line = 0; line < lines; ++line) {
      const auto& kept = live[static_cast<std::size_t>(line)];
      const int64_t first = forward ? 0 : width - static_cast<int64_t>(kept.size());
      for (std::size_t k = 0; k < kept.size(); ++k) at(out, line, first + static_cast<int64_t>(k)) = at(table, line, kept[k]);
    }
    return out;
  };
  plan.data_next = gather(plan.data_next);
  if (plan.has_mask_next) plan.mask_next = gather(plan.mask_next);
  plan.block_mask = gather(plan.block_mask);
}

PartialBlock transposed(const PartialBlock& block) {
  PartialBlock out(block.empty() ? 0 : block.front().size(), std::string(block.size(), '0'));
  for (std::size_t r = 0; r < block.size(); ++r)
    for (std::size_t c = 0; c < block[r].size(); ++c) out[c][r] = block[r][c];
  return out;
}

// Partial blocks deduplicated by content, numbered in order of first appearance.
class PartialBlockPool {
 public:
  int32_t id_of(PartialBlock block) {
    std::string key;
    for (const std::string& row : block) key += row;
    auto [it, inserted] = ids_.emplace(std::move(key), static_cast<int32_t>(blocks_.size()));
    if (inserted) blocks_.push_back(std::move(block));
    return it->second;
  }
  std::vector<PartialBlock> take() { return std::move(blocks_); }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<PartialBlock> blocks_;
};

bool has_partial_tile(const Table3<int8_t>& classes) {
  return std::find(classes.values.begin(), classes.values.end(), kPartialTile) != classes.values.end();
}

int64_t count_live(const Table3<int8_t>& classes) {
  return std::count_if(classes.values.begin(), classes.values.end(),
                       [](int8_t c) { return c != kEmptyTile; });
}

}  // namespace

Table3<int8_t> classify_tiles(const Mask& mask, const TileShape& tiles) {
  const int64_t kv_blocks = tiles.kv_blocks();
  Table3<int8_t> classes(1, tiles.q_blocks(), kv_blocks, kEmptyTile);
  std::vector<int64_t> coverage(static_cast<std::size_t>(kv_blocks));
  std::vector<int64_t> least(static_cast<std::size_t>(kv_blocks));
  std::vector<int64_t> most(static_cast<std::size_t>(kv_blocks));
  for (int64_t qb = 0; qb < tiles.q_blocks(); ++qb) {
    std::fill(least.begin(), least.end(), std::numeric_limits<int64_t>::max());
    std::fill(most.begin(), most.end(), 0);
    const int64_t row_end = std::min(tiles.q_len, (qb + 1) * tiles.block_q);
    for (int64_t i = qb * tiles.block_q; i < row_end; ++i) {
      std::fill(coverage.begin(), coverage.end(), 0);
      add_row_coverage(mask.row(i, tiles.kv_len), tiles.block_kv, coverage);
      for (std::size_t c = 0; c < coverage.size(); ++c) {
        least[c] = std::min(least[c], coverage[c]);
        most[c] = std::max(most[c], coverage[c]);
      }
    }
    for (int64_t c = 0; c < kv_blocks; ++c) {
      const std::size_t k = static_cast<std::size_t>(c);
      classes.at(0, qb, c) = most[k] == 0                ? kEmptyTile
                             : least[k] == tiles.block_kv ? kFullTile
                                                          : kPartialTile;
    }
  }
  return classes;
}

SplashPlan build_splash_plan(const HeadMasks& masks, int64_t heads, const TileShape& tiles, SplashPass pass) {
  SplashPlan plan;
  plan.pass = pass;
  plan.tiles = tiles;
  plan.heads = heads;
  const int64_t rows = masks.shared() ? 1 : heads;
  const int64_t q_blocks = tiles.q_blocks(), kv_blocks = tiles.kv_blocks();

  std::vector<Table3<int8_t>> per_mask;
  for (const Mask& mask : masks.unique) per_mask.push_back(classify_tiles(mask, tiles));
  plan.partial_mask = partial_tile_mask(masks, std::any_of(per_mask.begin(), per_mask.end(), has_partial_tile));

  plan.block_mask = Table3<int8_t>(rows, q_blocks, kv_blocks);
  for (int64_t r = 0; r < rows; ++r) {
    const Table3<int8_t>& classes = per_mask[static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(r)])];
    std::copy(classes.values.begin(), classes.values.end(),
              plan.block_mask.values.begin() + r * q_blocks * kv_blocks);
  }

  // Partial blocks are numbered by unique mask, then q block, then kv block; every head
  // sharing a mask shares its ids.
  Table3<int32_t> partial_id(rows, q_blocks, kv_blocks, 0);
  if (plan.partial_mask == PartialTileMask::kBitmask) {
    PartialBlockPool pool;
    std::vector<Table3<int32_t>> ids_per_mask;
    for (std::size_t u = 0; u < masks.unique.size(); ++u) {
      Table3<int32_t> ids(1, q_blocks, kv_blocks, 0);
      for (int64_t q = 0; q < q_blocks; ++q)
        for (int64_t c = 0; c < kv_blocks; ++c)
          if (per_mask[u].at(0, q, c) == kPartialTile)
            ids.at(0, q, c) = pool.id_of(tile_bits(masks.unique[u], tiles, q, c));
      ids_per_mask.push_back(std::move(ids));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const Table3<int32_t>& ids = ids_per_mask[static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(r)])];
      std::copy(ids.values.begin(), ids.values.end(), partial_id.values.begin() + r * q_blocks * kv_blocks);
    }
    plan.partial_blocks = pool.take();
    if (pass == SplashPass::kDkv)
      for (PartialBlock& block : plan.partial_blocks) block = transposed(block);
    plan.has_mask_next = true;
  }

  // The block a step loads along the walked axis: its kv block (forward) or q block (dkv).
  const std::vector<int64_t> walk = walk_order(plan.block_mask, pass);
  plan.data_next = next_selected(
      plan.block_mask, walk, [](int8_t c) { return c != kEmptyTile; },
      [&](int64_t step) {
        return static_cast<int32_t>(pass == SplashPass::kForward ? step % kv_blocks : step / kv_blocks % q_blocks);
      });
  if (plan.has_mask_next)
    plan.mask_next = next_selected(
        plan.block_mask, walk, [](int8_t c) { return c == kPartialTile; },
        [&](int64_t step) { return partial_id.values[static_cast<std::size_t>(step)]; });

  plan.total_tiles_per_batch = heads * q_blocks * kv_blocks;
  for (int64_t h = 0; h < heads; ++h)
    plan.live_tiles_per_batch += count_live(per_mask[static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(h)])]);

  if (rows == 1) shrink(plan);
  return plan;
}

KvBlockLists build_kv_block_lists(const HeadMasks& masks, int64_t heads, const TileShape& tiles) {
  KvBlockLists lists;
  lists.tiles = tiles;
  lists.rows = masks.shared() ? 1 : heads;
  std::vector<Table3<int8_t>> per_mask;
  for (const Mask& mask : masks.unique) per_mask.push_back(classify_tiles(mask, tiles));
  for (int64_t r = 0; r < lists.rows; ++r) {
    const Table3<int8_t>& classes = per_mask[static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(r)])];
    for (int64_t q = 0; q < classes.q_blocks; ++q) {
      std::vector<int32_t> partial, full;
      for (int64_t c = 0; c < classes.cols; ++c) {
        if (classes.at(0, q, c) == kPartialTile) partial.push_back(static_cast<int32_t>(c));
        if (classes.at(0, q, c) == kFullTile) full.push_back(static_cast<int32_t>(c));
      }
      lists.partial.push_back(std::move(partial));
      lists.full.push_back(std::move(full));
    }
  }
  lists.total_tiles_per_batch = heads * tiles.q_blocks() * tiles.kv_blocks();
  for (int64_t h = 0; h < heads; ++h)
    lists.live_tiles_per_batch += count_live(per_mask[static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(h)])]);
  return lists;
}

PartialTileMask partial_tile_mask(const HeadMasks& masks, bool has_partial_tiles) {
  if (!has_partial_tiles) return PartialTileMask::kNone;
  return masks.shared() && masks.unique.front().is_predicate() ? PartialTileMask::kPredicate
                                                               : PartialTileMask::kBitmask;
}

PartialTileMask partial_tile_mask(const HeadMasks& masks, const KvBlockLists& lists) {
  return partial_tile_mask(masks, std::any_of(lists.partial.begin(), lists.partial.end(),
                                              [](const auto& list) { return !list.empty(); }));
}

const char* partial_tile_mask_name(PartialTileMask mask) {
  switch (mask) {
    case PartialTileMask::kNone: return "none";
    case PartialTileMask::kPredicate: return "predicate";
    case PartialTileMask::kBitmask: return "bitmask";
  }
  return "?";
}

}  // namespace kgen
