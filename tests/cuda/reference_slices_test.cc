// The GPU harness (verify/cuda/harness.cc) compares a kernel with the float64 reference one
// (batch, kv head) slice at a time. These tests pin that the slices add up to exactly the
// full reference, that the pair count behind effective TFLOP/s is the mask's, and how a sampled
// persistent run picks the rows it compares.
#include <algorithm>

#include <gtest/gtest.h>

#include "dense_reference.h"
#include "verification_inputs.h"
#include "reference_slices.h"
#include "spec.h"

namespace kgen {
namespace {

// GQA with two kv heads, two batch elements, a different mask per head, segment ids, sinks
// and softcap: every way a slice could pick the wrong rows.
Spec mixed_spec() {
  return parse_spec(R"({
    "name": "slices", "kind": "attention_forward",
    "shape": {"batch": 2, "q_heads": 4, "kv_heads": 2, "q_len": 37, "kv_len": 29,
              "head_dim": 64, "head_dim_v": 64},
    "dtype": "bfloat16", "softcap": 20.0, "segment_ids": true, "sinks": true,
    "mask": {"type": "per_head", "masks": [
      {"type": "causal"}, {"type": "local", "left": 5, "right": 2},
      {"type": "prefix_lm", "prefix": 7}, {"type": "chunked_causal", "chunk": 8}]},
    "outputs": {"lse": true},
    "targets": {"sm90a": {"block_q": 64, "block_kv": 16}}
  })", ".");
}

TEST(ReferenceSlices, SlicesReproduceTheFullReferenceExactly) {
  const Spec spec = mixed_spec();
  const AttentionInputs inputs = verification_inputs(spec, 11);
  const AttentionOutputs full = dense_attention(spec, inputs);
  const std::vector<SliceId> slices = all_slices(spec);
  ASSERT_EQ(slices.size(), 4u);
  for (const SliceId& id : slices) {
    const Spec sub = slice_spec(spec, id);
    EXPECT_EQ(sub.shape.q_heads, 2);
    EXPECT_EQ(sub.shape.kv_heads, 1);
    EXPECT_EQ(sub.shape.batch, 1);
    const AttentionOutputs part = dense_attention(sub, slice_inputs(spec, inputs, id));
    const AttentionOutputs expected = slice_outputs(spec, full, id);
    EXPECT_EQ(part.out, expected.out) << "batch " << id.batch << " kv head " << id.kv_head;
    EXPECT_EQ(part.lse, expected.lse) << "batch " << id.batch << " kv head " << id.kv_head;
  }
}

TEST(ReferenceSlices, SlicesOfAnMhaSpecAreSingleHeads) {
  Spec spec = mixed_spec();
  spec.shape.kv_heads = spec.shape.q_heads;
  const SliceId id{1, 3};
  const Spec sub = slice_spec(spec, id);
  EXPECT_EQ(sub.shape.q_heads, 1);
  ASSERT_EQ(sub.masks.head_to_unique.size(), 1u);
  EXPECT_EQ(sub.masks.head_to_unique[0], spec.masks.head_to_unique[3]);
}

TEST(ReferenceSlices, KeptPairsCountTheMaskAndTheSegments) {
  const Spec spec = mixed_spec();
  const AttentionInputs inputs = verification_inputs(spec, 5);
  double expected = 0;
  for (int64_t b = 0; b < spec.shape.batch; ++b)
    for (int64_t h = 0; h < spec.shape.q_heads; ++h)
      for (int64_t i = 0; i < spec.shape.q_len; ++i)
        for (int64_t j = 0; j < spec.shape.kv_len; ++j)
          expected += spec.masks.of_head(h).allowed(i, j) &&
                      inputs.q_segment_ids[b * spec.shape.q_len + i] == inputs.kv_segment_ids[b * spec.shape.kv_len + j];
  EXPECT_EQ(kept_pairs(spec, inputs.q_segment_ids, inputs.kv_segment_ids), expected);
  EXPECT_GT(expected, 0);
}

// A sampled persistent run (verify/cuda/emulate.py, --sample work-items) compares the q blocks
// the kernel touched: one touched row makes its whole block count, and a block of another head
// or batch element is not picked up with it.
TEST(ReferenceSlices, TouchedQBlocksAreTheBlocksWithATouchedRow) {
  const Spec spec = mixed_spec();  // q_len 37: blocks of 16 rows are 0-15, 16-31, 32-36
  const int64_t q_len = spec.shape.q_len;
  const auto flat = [&](int64_t b, int64_t h, int64_t i) { return (b * spec.shape.q_heads + h) * q_len + i; };
  const std::vector<int64_t> touched = {flat(0, 0, 3), flat(0, 0, 15), flat(1, 2, 36), flat(1, 3, 16)};
  const std::vector<QBlock> blocks = touched_q_blocks(spec, 16, [&](int64_t row) {
    return std::find(touched.begin(), touched.end(), row) != touched.end();
  });
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].batch, 0);
  EXPECT_EQ(blocks[0].head, 0);
  EXPECT_EQ(blocks[0].q_block, 0);
  EXPECT_EQ(blocks[1].batch, 1);
  EXPECT_EQ(blocks[1].head, 2);
  EXPECT_EQ(blocks[1].q_block, 2);
  EXPECT_EQ(blocks[2].head, 3);
  EXPECT_EQ(blocks[2].q_block, 1);
  EXPECT_TRUE(touched_q_blocks(spec, 16, [](int64_t) { return false; }).empty());
}

// The reference of selected rows only (dense_attention's RowFilter) equals the full one on
// those rows, and select_slice_rows picks the same rows from both.
TEST(ReferenceSlices, SelectedRowsOfASliceMatchTheFullReference) {
  const Spec spec = mixed_spec();
  const AttentionInputs inputs = verification_inputs(spec, 3);
  const SliceId id{1, 1};
  const Spec sub = slice_spec(spec, id);
  const auto keep = [](int64_t head, int64_t i) { return head == 1 && i >= 16 && i < 32; };
  const AttentionOutputs full = dense_attention(sub, slice_inputs(spec, inputs, id));
  const AttentionOutputs some = dense_attention(sub, slice_inputs(spec, inputs, id),
                                                [&](int64_t, int64_t h, int64_t i) { return keep(h, i); });
  const AttentionOutputs expected = select_slice_rows(sub, full, keep);
  const AttentionOutputs got = select_slice_rows(sub, some, keep);
  ASSERT_EQ(expected.out.size(), std::size_t(16 * spec.shape.head_dim_v));
  ASSERT_EQ(expected.lse.size(), 16u);
  EXPECT_EQ(got.out, expected.out);
  EXPECT_EQ(got.lse, expected.lse);
  EXPECT_NE(select_slice_rows(sub, full, [](int64_t, int64_t i) { return i < 16; }).out, expected.out);
}

}  // namespace
}  // namespace kgen
