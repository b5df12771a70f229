// The GPU harness (verify/cuda/harness.cc) compares a kernel with the float64 reference one
// (batch, kv head) slice at a time. These tests pin that the slices add up to exactly the
// full reference, and that the pair count behind effective TFLOP/s is the mask's.
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

}  // namespace
}  // namespace kgen
