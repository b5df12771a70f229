// Every mask of docs/spec-format.md §2, and segment ids. All scores are 0 (q = 0), so a
// row's output is the plain mean of v over its kept keys, and v[j] = 2^j makes each kept
// set show in the result: its size is e^lse, and subsets of a given size have distinct
// sums.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dense_reference.h"
#include "tiny_spec.h"

namespace kgen {
namespace {

using testing::TinyShape;
using testing::tiny_spec;

using testing::kEps;
constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

// q = 0, k = 1, v[b][g][j][c] = 2^j for every batch, kv head and column.
AttentionInputs uniform_scores(const Spec& spec) {
  const Shape& sh = spec.shape;
  AttentionInputs in;
  in.q.assign(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len * sh.head_dim), 0.0);
  in.k.assign(static_cast<std::size_t>(sh.batch * sh.kv_heads * sh.kv_len * sh.head_dim), 1.0);
  for (int64_t bg = 0; bg < sh.batch * sh.kv_heads; ++bg)
    for (int64_t j = 0; j < sh.kv_len; ++j)
      for (int64_t c = 0; c < sh.head_dim_v; ++c)
        in.v.push_back(std::ldexp(1.0, static_cast<int>(j)));
  return in;
}

// Expected (out, number of kept keys) per row; lse = ln(count), or -inf with nothing kept.
struct RowMean {
  double out;
  int kept;
};

void expect_rows(const AttentionOutputs& r, const std::vector<RowMean>& rows,
                 std::size_t first_row = 0) {
  for (std::size_t n = 0; n < rows.size(); ++n) {
    SCOPED_TRACE("row " + std::to_string(first_row + n));
    EXPECT_NEAR(r.out[first_row + n], rows[n].out, kEps);
    if (rows[n].kept == 0)
      EXPECT_EQ(r.lse[first_row + n], kMinusInf);
    else
      EXPECT_NEAR(r.lse[first_row + n], std::log(rows[n].kept), kEps);
  }
}

AttentionOutputs attend(const Spec& spec) { return dense_attention(spec, uniform_scores(spec)); }

const TinyShape k4x4{.q_len = 4, .kv_len = 4};

TEST(Masks, FullAttendsEverything) {
  // Every row: (1 + 2 + 4 + 8) / 4.
  expect_rows(attend(tiny_spec(k4x4)), {{3.75, 4}, {3.75, 4}, {3.75, 4}, {3.75, 4}});
}

TEST(Masks, Causal) {
  // j <= i: {0}, {0,1}, {0,1,2}, {0,1,2,3}.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "causal"})")),
              {{1, 1}, {1.5, 2}, {7.0 / 3, 3}, {3.75, 4}});
}

TEST(Masks, CausalWithOffset) {
  // j <= i + 1: {0,1}, {0,1,2}, then everything.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "causal", "offset": 1})")),
              {{1.5, 2}, {7.0 / 3, 3}, {3.75, 4}, {3.75, 4}});
}

TEST(Masks, CausalOffsetAlignsShortQueriesToTheEnd) {
  // q_len 2 against kv_len 4 with offset 2: j <= i + 2, so {0,1,2} and {0,1,2,3}.
  expect_rows(attend(tiny_spec({.q_len = 2, .kv_len = 4}, R"({"type": "causal", "offset": 2})")),
              {{7.0 / 3, 3}, {3.75, 4}});
}

TEST(Masks, LocalWithOffset) {
  // i + 1 - 1 <= j <= i + 1 + 0: {0,1}, {1,2}, {2,3}, {3} (4 is past kv_len).
  expect_rows(
      attend(tiny_spec(k4x4, R"({"type": "local", "left": 1, "right": 0, "offset": 1})")),
      {{1.5, 2}, {3, 2}, {6, 2}, {8, 1}});
}

TEST(Masks, LocalUnboundedLeftAndNegativeOffset) {
  // left null, j <= i - 2 + 1 = i - 1: row 0 keeps nothing, then {0}, {0,1}, {0,1,2}.
  expect_rows(
      attend(tiny_spec(k4x4, R"({"type": "local", "left": null, "right": 1, "offset": -2})")),
      {{0, 0}, {1, 1}, {1.5, 2}, {7.0 / 3, 3}});
}

TEST(Masks, LocalUnboundedRight) {
  // j >= i - 1: everything, everything, {1,2,3}, {2,3}.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "local", "left": 1, "right": null})")),
              {{3.75, 4}, {3.75, 4}, {14.0 / 3, 3}, {6, 2}});
}

TEST(Masks, ChunkedCausal) {
  // Chunks {0,1} and {2,3}, causal inside: {0}, {0,1}, {2}, {2,3}.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "chunked_causal", "chunk": 2})")),
              {{1, 1}, {1.5, 2}, {4, 1}, {6, 2}});
}

TEST(Masks, ChunkedCausalWithAPartialLastChunk) {
  // Chunks {0,1,2} and {3}: {0}, {0,1}, {0,1,2}, {3}.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "chunked_causal", "chunk": 3})")),
              {{1, 1}, {1.5, 2}, {7.0 / 3, 3}, {8, 1}});
}

TEST(Masks, PrefixLm) {
  // j < 2 or j <= i: {0,1}, {0,1}, {0,1,2}, {0,1,2,3}.
  expect_rows(attend(tiny_spec(k4x4, R"({"type": "prefix_lm", "prefix": 2})")),
              {{1.5, 2}, {1.5, 2}, {7.0 / 3, 3}, {3.75, 4}});
}

TEST(Masks, ExplicitRows) {
  // Rows read literally: {0,3}, {1,2}, {3}, and an all-zero row that keeps nothing.
  const Spec spec = tiny_spec({.q_len = 4, .kv_len = 4},
                              R"({"type": "explicit", "rows": ["1001", "0110", "0001", "0000"]})");
  expect_rows(attend(spec), {{4.5, 2}, {3, 2}, {8, 1}, {0, 0}});
}

TEST(Masks, ExplicitRowsOfARectangularMask) {
  // q_len 2, kv_len 3: {0,2}, {1}.
  const Spec spec = tiny_spec({.q_len = 2, .kv_len = 3},
                              R"({"type": "explicit", "rows": ["101", "010"]})");
  expect_rows(attend(spec), {{2.5, 2}, {2, 1}});
}

TEST(Masks, AndIntersects) {
  // causal and j >= i - 1: {0}, {0,1}, {1,2}, {2,3}.
  const Spec spec = tiny_spec(k4x4, R"({"type": "and", "masks": [
      {"type": "causal"}, {"type": "local", "left": 1, "right": null}]})");
  expect_rows(attend(spec), {{1, 1}, {1.5, 2}, {3, 2}, {6, 2}});
}

TEST(Masks, OrUnites) {
  // The diagonal, or j <= i - 3 (only row 3 gains {0}): {0}, {1}, {2}, {0,3}.
  const Spec spec = tiny_spec(k4x4, R"({"type": "or", "masks": [
      {"type": "local", "left": 0, "right": 0}, {"type": "causal", "offset": -3}]})");
  expect_rows(attend(spec), {{1, 1}, {2, 1}, {4, 1}, {4.5, 2}});
}

TEST(Masks, NestedAndOfOr) {
  // chunked_causal 2 gives {0}, {0,1}, {2}, {2,3}; local [i, i+1] gives {0,1}, {1,2},
  // {2,3}, {3}; their union {0,1}, {0,1,2}, {2,3}, {2,3}, intersected with the explicit
  // rows: {1}, {0,1,2}, {2,3}, {3}.
  const Spec spec = tiny_spec(k4x4, R"({"type": "and", "masks": [
      {"type": "or", "masks": [{"type": "chunked_causal", "chunk": 2},
                               {"type": "local", "left": 0, "right": 1}]},
      {"type": "explicit", "rows": ["0111", "1111", "0111", "0101"]}]})");
  expect_rows(attend(spec), {{2, 1}, {7.0 / 3, 3}, {6, 2}, {8, 1}});
}

TEST(Masks, PerHeadEachHeadUsesItsOwnMask) {
  const Spec spec = tiny_spec({.q_heads = 3, .kv_heads = 3, .q_len = 4, .kv_len = 4},
                              R"({"type": "per_head", "masks": [
      {"type": "causal"}, {"type": "local", "left": 0, "right": 0},
      {"type": "explicit", "rows": ["1000", "1000", "0001", "0001"]}]})");
  const auto r = attend(spec);
  expect_rows(r, {{1, 1}, {1.5, 2}, {7.0 / 3, 3}, {3.75, 4}}, 0);  // head 0: causal
  expect_rows(r, {{1, 1}, {2, 1}, {4, 1}, {8, 1}}, 4);              // head 1: diagonal
  expect_rows(r, {{1, 1}, {1, 1}, {8, 1}, {8, 1}}, 8);              // head 2: explicit
}

TEST(Masks, FullyMaskedRowWritesZeroAndMinusInfinity) {
  // Causal with offset -1: row 0 keeps nothing; row 1 keeps {0}. head_dim_v 2 shows
  // that every column of the masked row is 0.
  const Spec spec = tiny_spec({.q_len = 2, .kv_len = 2, .head_dim_v = 2},
                              R"({"type": "causal", "offset": -1})");
  const auto r = attend(spec);
  EXPECT_EQ(r.out[0], 0.0);
  EXPECT_EQ(r.out[1], 0.0);
  EXPECT_EQ(r.lse[0], kMinusInf);
  EXPECT_NEAR(r.out[2], 1.0, kEps);
  EXPECT_NEAR(r.out[3], 1.0, kEps);
  EXPECT_NEAR(r.lse[1], 0.0, kEps);
}

AttentionInputs with_segments(const Spec& spec, std::vector<int32_t> q_ids,
                              std::vector<int32_t> kv_ids) {
  AttentionInputs in = uniform_scores(spec);
  in.q_segment_ids = std::move(q_ids);
  in.kv_segment_ids = std::move(kv_ids);
  return in;
}

TEST(SegmentIds, KeepOnlyKeysOfTheSameSegment) {
  Spec spec = tiny_spec(k4x4);
  spec.segment_ids = true;
  // q ids [0,0,1,1], kv ids [0,1,1,1]: rows 0, 1 keep {0}; rows 2, 3 keep {1,2,3}.
  expect_rows(dense_attention(spec, with_segments(spec, {0, 0, 1, 1}, {0, 1, 1, 1})),
              {{1, 1}, {1, 1}, {14.0 / 3, 3}, {14.0 / 3, 3}});
}

TEST(SegmentIds, AreAndedWithTheMask) {
  Spec spec = tiny_spec(k4x4, R"({"type": "causal"})");
  spec.segment_ids = true;
  // Same ids as above, and j <= i: {0}, {0}, {1,2}, {1,2,3}.
  expect_rows(dense_attention(spec, with_segments(spec, {0, 0, 1, 1}, {0, 1, 1, 1})),
              {{1, 1}, {1, 1}, {3, 2}, {14.0 / 3, 3}});
}

TEST(SegmentIds, AreReadPerBatch) {
  Spec spec = tiny_spec({.batch = 2, .q_len = 2, .kv_len = 4});
  spec.segment_ids = true;
  // Batch 0: q [0,1] against kv [0,0,1,1]: {0,1}, {2,3}.
  // Batch 1: q [5,7] against kv [7,5,5,9]: {1,2}, {0}.
  const auto r = dense_attention(spec, with_segments(spec, {0, 1, 5, 7}, {0, 0, 1, 1, 7, 5, 5, 9}));
  expect_rows(r, {{1.5, 2}, {6, 2}, {3, 2}, {1, 1}});
}

TEST(SegmentIds, AQuerySegmentAbsentFromTheKeysMasksTheRow) {
  Spec spec = tiny_spec({.q_len = 2, .kv_len = 2});
  spec.segment_ids = true;
  // Segment 3 has no keys: row 1 keeps nothing.
  expect_rows(dense_attention(spec, with_segments(spec, {0, 3}, {0, 0})), {{1.5, 2}, {0, 0}});
}

}  // namespace
}  // namespace kgen
