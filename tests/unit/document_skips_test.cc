// The document skip rule (generator/document_skips.h): block ranges, the rule checked against
// every pair of ids on random blocks (a rule planted with `<=` is caught by the same check), and
// the step counts `kgen explain --document-lengths` prints, also through the real binary.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "diagnostics.h"
#include "document_skips.h"
#include "run_kgen.h"
#include "spec.h"

namespace kgen {
namespace {

TEST(DocumentSkipRule, BlockRangesReduceEachBlockAndAPartialLastOne) {
  const std::vector<int32_t> ids = {3, 1, 2, 7, 7, 5, 9};
  const std::vector<IdRange> ranges = block_ranges(ids.data(), 7, 3);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].min, 1);
  EXPECT_EQ(ranges[0].max, 3);
  EXPECT_EQ(ranges[1].min, 5);
  EXPECT_EQ(ranges[1].max, 7);
  EXPECT_EQ(ranges[2].min, 9);  // the partial last block: only the position that exists
  EXPECT_EQ(ranges[2].max, 9);
}

TEST(DocumentSkipRule, RangesThatTouchMeet) {
  EXPECT_EQ(document_step({0, 2}, {3, 4}), DocumentStep::kDead);
  EXPECT_EQ(document_step({5, 6}, {3, 4}), DocumentStep::kDead);
  EXPECT_EQ(document_step({0, 3}, {3, 4}), DocumentStep::kCompare);  // one document spans both blocks
  EXPECT_EQ(document_step({4, 6}, {3, 4}), DocumentStep::kCompare);
  EXPECT_EQ(document_step({4, 4}, {4, 4}), DocumentStep::kOneDocument);
  EXPECT_EQ(document_step({4, 4}, {3, 4}), DocumentStep::kCompare);
  EXPECT_EQ(document_step({3, 4}, {4, 4}), DocumentStep::kCompare);
}

// What a step's pairs of ids say: whether any q id equals a kv id, whether every one does.
struct Pairs {
  bool any_equal = false;
  bool all_equal = true;
};
Pairs pairs_of(const std::vector<int32_t>& q, const std::vector<int32_t>& kv) {
  Pairs pairs;
  for (int32_t a : q)
    for (int32_t b : kv) {
      pairs.any_equal = pairs.any_equal || a == b;
      pairs.all_equal = pairs.all_equal && a == b;
    }
  return pairs;
}

using Rule = DocumentStep (*)(IdRange, IdRange);

// The first random step (blocks of 1-4 ids, sorted as packed documents are, or not) whose
// classification by `rule` contradicts its pairs: a dead step with an equal pair, a step inside
// one document with a pair that differs. Empty when the rule holds on all of them.
std::string contradiction(Rule rule) {
  std::mt19937 random(29);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<int32_t> q(1 + random() % 4), kv(1 + random() % 4);
    for (int32_t& id : q) id = static_cast<int32_t>(random() % 5);
    for (int32_t& id : kv) id = static_cast<int32_t>(random() % 5);
    if (trial % 2) {
      std::sort(q.begin(), q.end());
      std::sort(kv.begin(), kv.end());
    }
    const DocumentStep step = rule(block_ranges(q.data(), static_cast<int64_t>(q.size()), 4)[0],
                                   block_ranges(kv.data(), static_cast<int64_t>(kv.size()), 4)[0]);
    const Pairs pairs = pairs_of(q, kv);
    if (step == DocumentStep::kDead && pairs.any_equal) return "a dead step keeps a pair";
    if (step == DocumentStep::kOneDocument && !pairs.all_equal) return "a step inside one document drops a pair";
    if (step == DocumentStep::kCompare && !pairs.any_equal && q.size() == 1 && kv.size() == 1)
      return "two blocks of one id each, different, were not found dead";
  }
  return "";
}

TEST(DocumentSkipRule, TheRuleAgreesWithEveryPairOfIds) { EXPECT_EQ(contradiction(document_step), ""); }

// The contract's planted bug: ranges that touch taken for apart.
DocumentStep touching_is_dead(IdRange q, IdRange kv) {
  if (q.max <= kv.min || kv.max <= q.min) return DocumentStep::kDead;
  return document_step(q, kv);
}
DocumentStep one_side_is_one_document(IdRange q, IdRange kv) {
  const DocumentStep step = document_step(q, kv);
  return step == DocumentStep::kCompare && q.min == q.max ? DocumentStep::kOneDocument : step;
}

TEST(DocumentSkipRule, PlantedRulesAreCaught) {
  EXPECT_EQ(contradiction(touching_is_dead), "a dead step keeps a pair");
  EXPECT_EQ(contradiction(one_side_is_one_document), "a step inside one document drops a pair");
}

TEST(DocumentSkipRule, PackedDocumentsRepeatAndTheLastIsCut) {
  EXPECT_EQ(packed_document_ids({2, 3}, 9), (std::vector<int32_t>{0, 0, 1, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(packed_document_ids({20}, 4), (std::vector<int32_t>{0, 0, 0, 0}));
}

Spec causal_spec(int64_t heads, int64_t length) {
  return parse_spec(R"({"name": "documents", "kind": "attention_forward", "dtype": "bfloat16", "segment_ids": true,
    "shape": {"q_heads": )" + std::to_string(heads) + R"(, "q_len": )" + std::to_string(length) +
                        R"(, "head_dim": 128}, "mask": {"type": "causal"},
    "targets": {"tpu": {"generation": "v5e", "block_q": 256, "block_kv": 256}}})",
                    ".");
}

TEST(DocumentSkipRule, CountsStepsOfTheStaticPlan) {
  const Spec spec = causal_spec(2, 1024);
  const TileShape tiles{1024, 1024, 256, 256};
  auto counts = [&](std::vector<int64_t> lengths) {
    const std::vector<int32_t> ids = packed_document_ids(lengths, 1024);
    return count_document_steps(spec.masks, 2, tiles, ids, ids);
  };
  // Causal keeps 10 of the 16 tiles per head. One document per block: the diagonal inside one,
  // every other kept step dead.
  DocumentStepCounts one_per_block = counts({256});
  EXPECT_EQ(one_per_block.planned, 20);
  EXPECT_EQ(one_per_block.dead, 12);
  EXPECT_EQ(one_per_block.one_document, 8);
  EXPECT_EQ(one_per_block.compared(), 0);
  // The CUDA forwards compare ids on every partial tile: the diagonal ones compare there.
  const std::vector<int32_t> ids = packed_document_ids({256}, 1024);
  const DocumentStepCounts cuda =
      count_document_steps(spec.masks, 2, tiles, ids, ids, PartialTilesInOneDocument::kCompare);
  EXPECT_EQ(cuda.dead, 12);
  EXPECT_EQ(cuda.one_document, 0);
  EXPECT_EQ(cuda.compared(), 8);
  // Documents of 384: block ranges [0,0] [0,1] [1,1] [2,2]; per head 4 dead, 3 inside one, 3 compare.
  DocumentStepCounts spanning = counts({384});
  EXPECT_EQ(spanning.dead, 8);
  EXPECT_EQ(spanning.one_document, 6);
  EXPECT_EQ(spanning.compared(), 6);
  // One document: nothing dead, nothing compared.
  DocumentStepCounts whole = counts({1024});
  EXPECT_EQ(whole.dead, 0);
  EXPECT_EQ(whole.one_document, 20);
}

TEST(DocumentSkipRule, PrintsEachTargetAtItsOwnBlocks) {
  const std::string text = explain_document_lengths(causal_spec(2, 1024), {256});
  EXPECT_NE(text.find("documents of lengths 256 packed in order"), std::string::npos) << text;
  EXPECT_NE(text.find("tpu (block_q 256, block_kv 256): 20 steps in the static plan; 12 dead (60.0%), 8 inside one "
                      "document, without the id comparison (40.0%), 0 compare ids (0.0%)"),
            std::string::npos)
      << text;
}

TEST(DocumentSkipRule, RefusesBadLengthsAndSpecsWithoutSegmentIds) {
  EXPECT_EQ(parse_document_lengths("1024,512"), (std::vector<int64_t>{1024, 512}));
  for (const char* bad : {"", "0", "12,", ",3", "1,-2", "a", "1;2"})
    EXPECT_THROW(parse_document_lengths(bad), SpecError) << bad;
  const Spec plain = parse_spec(R"({"name": "plain", "kind": "attention_forward", "dtype": "bfloat16",
    "shape": {"q_heads": 2, "q_len": 1024, "head_dim": 128}, "mask": {"type": "causal"},
    "targets": {"tpu": {"generation": "v5e", "block_q": 256, "block_kv": 256}}})",
                                ".");
  EXPECT_THROW(explain_document_lengths(plain, {256}), SpecError);
}

// kgen explain --document-lengths: every target of the document family at its own blocks
// (Llama 3's 8192 tokens in documents of 2048: causal keeps 136 of 256 tpu tiles per head, 96 of
// them between documents; 2080 of 4096 at the CUDA targets' 128 × 128, 1536 of them dead, and
// the 64 diagonal ones, partial, still comparing ids there).
TEST(KgenExplain, PrintsEveryTargetsStepsAtItsOwnBlocks) {
  const testing::KgenRun result =
      testing::run_kgen(KGEN_SOURCE_DIR, "explain specs/document_packing_segment_ids.json --document-lengths 2048");
  EXPECT_EQ(result.status, 0) << result.output;
  for (const char* line :
       {"tpu (block_q 512, block_kv 512): 4352 steps in the static plan; 3072 dead (70.6%), 1280 inside one document",
        "sm90a (block_q 128, block_kv 128): 66560 steps in the static plan; 49152 dead (73.8%), 15360 inside one",
        "without the id comparison (23.1%), 2048 compare ids (3.1%)",
        "sm100a (block_q 128, block_kv 128): 66560 steps in the static plan; 49152 dead (73.8%)"})
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  const testing::KgenRun without_ids =
      testing::run_kgen(KGEN_SOURCE_DIR, "explain specs/splash.json --document-lengths 2048");
  EXPECT_EQ(without_ids.status, 2) << without_ids.output;
  EXPECT_NE(without_ids.output.find("--document-lengths: found a spec without segment ids"), std::string::npos)
      << without_ids.output;
  const std::string spec = "specs/document_packing_segment_ids.json";
  EXPECT_EQ(testing::run_kgen(KGEN_SOURCE_DIR, "explain " + spec + " --document-lengths 0,2").status, 2);
  EXPECT_EQ(testing::run_kgen(KGEN_SOURCE_DIR, "plan " + spec + " --target tpu --document-lengths 8").status, 2);
}

}  // namespace
}  // namespace kgen
