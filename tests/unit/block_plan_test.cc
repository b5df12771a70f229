#include "block_plan.h"

#include <random>

#include <gtest/gtest.h>

namespace kgen {
namespace {

using Json = nlohmann::json;

HeadMasks masks_from(const Json& mask, int64_t heads, int64_t q_len, int64_t kv_len) {
  return parse_head_masks(mask, "mask", MaskContext{heads, q_len, kv_len, ".", nullptr});
}

template <typename T>
std::vector<int> flat(const Table3<T>& table) {
  return std::vector<int>(table.values.begin(), table.values.end());
}

TEST(ClassifyTiles, CausalSquareTiles) {
  const HeadMasks masks = masks_from({{"type", "causal"}}, 1, 512, 512);
  const Table3<int8_t> classes = classify_tiles(masks.unique[0], TileShape{512, 512, 128, 128});
  EXPECT_EQ(flat(classes), (std::vector<int>{1, 0, 0, 0,  //
                                             2, 1, 0, 0,  //
                                             2, 2, 1, 0,  //
                                             2, 2, 2, 1}));
}

TEST(ClassifyTiles, RaggedKvTailIsNeverFull) {
  // kv_len 192 with 128-wide tiles: the second tile is half outside and must be masked.
  const HeadMasks masks = masks_from({{"type", "full"}}, 1, 64, 192);
  EXPECT_EQ(flat(classify_tiles(masks.unique[0], TileShape{64, 192, 64, 128})), (std::vector<int>{2, 1}));
}

// The interval view of a row and the per-element predicate are two implementations of
// docs/spec-format.md §2; they must agree everywhere, including composed and explicit
// masks.
TEST(MaskRows, IntervalsAgreeWithThePredicate) {
  std::mt19937 random(7);
  const int64_t q_len = 37, kv_len = 29;
  std::vector<std::string> rows;
  for (int64_t i = 0; i < q_len; ++i) {
    std::string row;
    for (int64_t j = 0; j < kv_len; ++j) row += random() % 3 ? '1' : '0';
    rows.push_back(row);
  }
  const std::vector<Json> cases = {
      {{"type", "full"}},
      {{"type", "causal"}, {"offset", -5}},
      {{"type", "causal"}, {"offset", 9}},
      {{"type", "local"}, {"left", 3}, {"right", nullptr}, {"offset", 2}},
      {{"type", "local"}, {"left", nullptr}, {"right", 1}, {"offset", -4}},
      {{"type", "local"}, {"left", 4}, {"right", 2}},
      {{"type", "chunked_causal"}, {"chunk", 6}},
      {{"type", "prefix_lm"}, {"prefix", 11}},
      {{"type", "explicit"}, {"rows", rows}},
      {{"type", "and"}, {"masks", {{{"type", "causal"}}, {{"type", "explicit"}, {"rows", rows}}}}},
      {{"type", "or"},
       {"masks", {{{"type", "chunked_causal"}, {"chunk", 5}},
                  {{"type", "and"}, {"masks", {{{"type", "local"}, {"left", 1}, {"right", 1}}, {{"type", "prefix_lm"}, {"prefix", 3}}}}}}}},
  };
  for (const Json& mask_json : cases) {
    const Mask& mask = masks_from(mask_json, 1, q_len, kv_len).unique[0];
    for (int64_t i = 0; i < q_len; ++i) {
      std::string from_intervals(static_cast<std::size_t>(kv_len), '0');
      for (const Interval& run : mask.row(i, kv_len))
        for (int64_t j = run.begin; j < run.end; ++j) from_intervals[static_cast<std::size_t>(j)] = '1';
      std::string from_predicate;
      for (int64_t j = 0; j < kv_len; ++j) from_predicate += mask.allowed(i, j) ? '1' : '0';
      ASSERT_EQ(from_intervals, from_predicate) << mask_json.dump() << " row " << i;
    }
  }
}

TEST(SplashPlan, CausalIsShrunkAndHasNoPartialBlocks) {
  const SplashPlan plan = build_splash_plan(masks_from({{"type", "causal"}}, 4, 384, 384), 4, TileShape{384, 384, 128, 128});
  EXPECT_EQ(plan.partial_mask, PartialTileMask::kPredicate);
  EXPECT_FALSE(plan.has_mask_next);
  EXPECT_EQ(plan.width(), 3);
  EXPECT_EQ(flat(plan.block_mask), (std::vector<int>{1, 0, 0, 2, 1, 0, 2, 2, 1}));
  EXPECT_EQ(flat(plan.data_next), (std::vector<int>{0, 0, 0, 0, 1, 0, 0, 1, 2}));
  EXPECT_EQ(plan.live_tiles_per_batch, 4 * 6);
  EXPECT_EQ(plan.total_tiles_per_batch, 4 * 9);
}

TEST(SplashPlan, DistinctHeadsKeepOneRowEachAndWrapAcrossHeads) {
  // Tiles are 1 x 2. Head 0 is live only at (q 0, kv 1), head 1 only at (q 0, kv 0).
  const Json mask = {{"type", "per_head"},
                     {"masks", {{{"type", "explicit"}, {"rows", {"0010", "0000"}}},
                                {{"type", "explicit"}, {"rows", {"1100", "0000"}}}}}};
  const SplashPlan plan = build_splash_plan(masks_from(mask, 2, 2, 4), 2, TileShape{2, 4, 1, 2});
  EXPECT_EQ(plan.width(), 2);  // not shrunk: heads differ
  EXPECT_EQ(flat(plan.block_mask), (std::vector<int>{0, 1, 0, 0, 2, 0, 0, 0}));
  // Grid order h0(q0,kv0) h0(q0,kv1) h0(q1,kv0) h0(q1,kv1) h1(q0,kv0) ...; each step names
  // the next live tile's kv block; past the last live tile, the first one (h0, kv 1).
  EXPECT_EQ(flat(plan.data_next), (std::vector<int>{1, 1, 0, 0, 0, 1, 1, 1}));
  ASSERT_TRUE(plan.has_mask_next);
  EXPECT_EQ(flat(plan.mask_next), (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(plan.partial_blocks, (std::vector<PartialBlock>{{"10"}}));
}

TEST(SplashPlan, PartialBlocksAreDeduplicatedAcrossHeads) {
  const Json mask = {{"type", "per_head"},
                     {"masks", {{{"type", "explicit"}, {"rows", {"1011", "0000"}}},
                                {{"type", "explicit"}, {"rows", {"0000", "1010"}}}}}};
  const SplashPlan plan = build_splash_plan(masks_from(mask, 2, 2, 4), 2, TileShape{2, 4, 1, 2});
  // "10" appears at h0(q0,kv0), h1(q1,kv0) and h1(q1,kv1): one block, id 0.
  EXPECT_EQ(plan.partial_blocks, (std::vector<PartialBlock>{{"10"}}));
  EXPECT_EQ(flat(plan.block_mask), (std::vector<int>{1, 2, 0, 0, 0, 0, 1, 1}));
}

TEST(SplashPlan, ShrinkingPadsWithZeros) {
  // A shared explicit mask in 1 x 2 tiles: q row 0 is live at kv 1 and 2,
  // row 1 live at kv 2 only; row 1's second step is padding: block 0, data 0, mask 0.
  const Json mask = {{"type", "explicit"}, {"rows", {"001011", "000001"}}};
  const SplashPlan plan = build_splash_plan(masks_from(mask, 3, 2, 6), 3, TileShape{2, 6, 1, 2});
  EXPECT_EQ(plan.width(), 2);
  EXPECT_EQ(flat(plan.block_mask), (std::vector<int>{1, 2, 1, 0}));
  EXPECT_EQ(flat(plan.data_next), (std::vector<int>{1, 2, 2, 0}));
  EXPECT_EQ(flat(plan.mask_next), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(plan.partial_blocks, (std::vector<PartialBlock>{{"10"}, {"01"}}));
}

TEST(SplashPlan, AnAllEmptyMaskStillRunsOneStepPerQBlock) {
  const Json mask = {{"type", "causal"}, {"offset", -1000}};
  const SplashPlan plan = build_splash_plan(masks_from(mask, 1, 256, 256), 1, TileShape{256, 256, 128, 128});
  EXPECT_EQ(plan.width(), 1);
  EXPECT_EQ(flat(plan.block_mask), (std::vector<int>{0, 0}));
  EXPECT_EQ(flat(plan.data_next), (std::vector<int>{0, 0}));
  EXPECT_EQ(plan.live_tiles_per_batch, 0);
}

TEST(KvBlockLists, ListPartialAndFullBlocksPerQBlock) {
  const KvBlockLists lists = build_kv_block_lists(masks_from({{"type", "causal"}}, 2, 384, 384), 2, TileShape{384, 384, 128, 128});
  EXPECT_EQ(lists.rows, 1);
  EXPECT_EQ(lists.partial, (std::vector<std::vector<int32_t>>{{0}, {1}, {2}}));
  EXPECT_EQ(lists.full, (std::vector<std::vector<int32_t>>{{}, {0}, {0, 1}}));
  EXPECT_EQ(lists.live_tiles_per_batch, 12);
}

// The partial-tile choice is made once (partial_tile_mask) and every view of the plan agrees.
TEST(PartialTileMask, TheSplashPlanAndTheKvBlockListsAgree) {
  struct Case {
    Json mask;
    TileShape tiles;
    PartialTileMask expected;
  };
  const std::vector<Case> cases = {
      {{{"type", "causal"}}, TileShape{384, 384, 128, 128}, PartialTileMask::kPredicate},
      {{{"type", "full"}}, TileShape{384, 384, 128, 128}, PartialTileMask::kNone},
      {{{"type", "local"}, {"left", 128}, {"right", 0}}, TileShape{512, 512, 128, 128}, PartialTileMask::kPredicate},
      // Heads with different masks: bits per tile, even though both are predicates.
      {{{"type", "per_head"}, {"masks", {{{"type", "causal"}}, {{"type", "full"}}}}},
       TileShape{384, 384, 128, 128},
       PartialTileMask::kBitmask},
      {{{"type", "explicit"}, {"rows", {"0110", "1111"}}}, TileShape{2, 4, 1, 2}, PartialTileMask::kBitmask},
      // Tile-aligned explicit bits: no partial tile, nothing to mask.
      {{{"type", "explicit"}, {"rows", {"0011", "1111"}}}, TileShape{2, 4, 1, 2}, PartialTileMask::kNone},
  };
  for (const Case& c : cases) {
    const HeadMasks masks = masks_from(c.mask, 2, c.tiles.q_len, c.tiles.kv_len);
    EXPECT_EQ(build_splash_plan(masks, 2, c.tiles).partial_mask, c.expected) << c.mask.dump();
    EXPECT_EQ(partial_tile_mask(masks, build_kv_block_lists(masks, 2, c.tiles)), c.expected) << c.mask.dump();
  }
}

}  // namespace
}  // namespace kgen
