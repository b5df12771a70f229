// The harnesses' check of the document pre-pass's workspace (verify/cuda/document_tiles_check.h)
// fails on what a wrong pre-pass or a wrong launcher constant would leave: a workspace of another
// size than the host's layout, a count or an entry that differs; ints it never writes are free.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "document_tiles_check.h"
#include "spec.h"

namespace kgen::sm90a {
namespace {

Spec documents_spec() {
  return parse_spec(R"({"name": "documents", "kind": "attention_forward", "dtype": "bfloat16", "segment_ids": true,
    "shape": {"q_heads": 2, "kv_heads": 1, "q_len": 256, "head_dim": 64}, "mask": {"type": "causal"},
    "targets": {"sm90a": {"block_q": 128, "block_kv": 64}}})",
                    ".");
}

TEST(DocumentTilesCheck, FailsOnAnotherSizeACountOrAnEntry) {
  const Spec spec = documents_spec();
  // Two documents of 128: q block 1 (positions 128-255) meets kv blocks 0 and 1 across documents.
  std::vector<int32_t> ids(256, 0);
  for (int i = 128; i < 256; ++i) ids[static_cast<std::size_t>(i)] = 1;
  const DocumentTilesExpected expected = expected_document_tiles(spec, "sm90a", ids, ids);
  // Causal at 128 x 64: lists of 2 and 4 tiles per batch row, one plan row shared by both
  // heads; q block 1's two full tiles (kv blocks 0 and 1) are dead, its partial ones walked.
  EXPECT_EQ(expected.ints.size(), 3u * 2 + 6);
  EXPECT_EQ(expected.counts.planned, 2 * 6);
  EXPECT_EQ(expected.counts.walked, 2 * 4);
  EXPECT_EQ(expected.counts.one_document, 0);

  std::vector<int32_t> written = expected.ints;
  EXPECT_EQ(compare_document_tiles(expected, written), "");
  written.push_back(0);
  EXPECT_NE(compare_document_tiles(expected, written).find("holds 13 ints, the plan's layout 12"),
            std::string::npos);
  written = expected.ints;
  written[3] += 1;  // list 1's tile count
  EXPECT_NE(compare_document_tiles(expected, written), "");
  written = expected.ints;
  written[6] += 1;  // list 0's first entry
  EXPECT_NE(compare_document_tiles(expected, written), "");
  // The tail of list 1's entry range, past its two walked tiles, is never written: anything goes.
  written = expected.ints;
  written.back() = -7;
  EXPECT_EQ(compare_document_tiles(expected, written), "");
}

}  // namespace
}  // namespace kgen::sm90a
