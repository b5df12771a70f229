// Generated tpu kernels, executed on the CPU from their MLIR, against the reference:
// every feature of docs/spec-format.md §3 passes, and every planted bug fails, including a
// kernel with each feature removed (the verification inputs make each one visible:
// docs/verification.md).
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "document_skips.h"
#include "spec.h"
#include "spec_outputs.h"
#include "tpu_arrays.h"
#include "template_engine.h"
#include "tpu_verifier.h"
#include "verification_inputs.h"

namespace kgen {
namespace {

Spec spec_from(const std::string& json) { return parse_spec(json, "."); }

std::string tpu_module(const Spec& spec) {
  TemplateEngine engine([](const std::string& path) {
    std::ifstream in(std::string(KGEN_SOURCE_DIR) + "/templates/" + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  });
  for (const GeneratedFile& file : render_spec_outputs(spec, engine, runtime_digests(KGEN_SOURCE_DIR)))
    if (file.path.size() > 9 && file.path.compare(file.path.size() - 9, 9, ".tpu.mlir") == 0) return file.content;
  throw std::runtime_error("no tpu module for " + spec.name);
}

TpuVerifyResult verify(const Spec& spec, const std::string& module) {
  TpuVerifyOptions options;
  options.max_pairs = 64;  // small specs: every (batch, head) pair
  return verify_tpu_kernel(spec, module, spec.name + ".tpu.mlir", options);
}

std::string random_rows(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 random(seed);
  std::string json = "[";
  for (int64_t i = 0; i < rows; ++i) {
    json += (i ? ",\"" : "\"");
    for (int64_t j = 0; j < cols; ++j) json += (random() % 4 == 0) ? '0' : '1';
    json += "\"";
  }
  return json + "]";
}

// Rows 0-63 have no key to attend: out must be 0 and lse -inf there. They share a live
// tile with rows that do attend, so the kernel cannot skip them.
const std::string kMaskedRows = R"({"name": "masked_rows", "kind": "attention_forward", "dtype": "float32",
  "shape": {"q_heads": 2, "q_len": 256, "head_dim": 128}, "mask": {"type": "causal", "offset": -64},
  "outputs": {"lse": true}, "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128}}})";

// The same rows with a sink: out 0, lse = the sink.
const std::string kSinks = R"({"name": "sinks", "kind": "attention_forward", "dtype": "bfloat16", "sinks": true,
  "shape": {"q_heads": 4, "kv_heads": 2, "q_len": 256, "head_dim": 128}, "mask": {"type": "causal", "offset": -64},
  "outputs": {"lse": true}, "targets": {"tpu": {"generation": "v6e", "block_q": 64, "block_kv": 128}}})";

// MQA, batch 2, rectangular, head_dim_v != head_dim, sub-tiled kv blocks, segment ids.
const std::string kSegments = R"({"name": "segments", "kind": "attention_forward", "dtype": "float16",
  "segment_ids": true, "outputs": {"lse": true},
  "shape": {"batch": 2, "q_heads": 4, "kv_heads": 1, "q_len": 256, "kv_len": 512, "head_dim": 64, "head_dim_v": 128},
  "mask": {"type": "local", "left": 200, "right": 40, "offset": 128},
  "targets": {"tpu": {"generation": "v5p", "block_q": 128, "block_kv": 256, "block_kv_compute": 128}}})";

// An or/and composition with softcap and a scale.
const std::string kComposed = R"({"name": "composed", "kind": "attention_forward", "dtype": "float32",
  "scale": 0.2, "softcap": 20.0, "outputs": {"lse": true}, "shape": {"q_heads": 2, "q_len": 384, "head_dim": 128},
  "mask": {"type": "or", "masks": [{"type": "chunked_causal", "chunk": 96},
           {"type": "and", "masks": [{"type": "prefix_lm", "prefix": 40}, {"type": "local", "left": 300, "right": null}]}]},
  "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128}}})";

// Distinct per-head masks, one explicit: partial blocks deduplicated across heads.
std::string per_head_spec() {
  return R"({"name": "per_head", "kind": "attention_forward", "dtype": "float32", "outputs": {"lse": true},
  "shape": {"q_heads": 3, "q_len": 16, "kv_len": 256, "head_dim": 128},
  "mask": {"type": "per_head", "masks": [{"type": "causal", "offset": 120},
           {"type": "local", "left": 7, "right": 0, "offset": 120},
           {"type": "explicit", "rows": )" + random_rows(16, 256, 7) + R"(}]},
  "targets": {"tpu": {"generation": "v5e", "block_q": 8, "block_kv": 128}}})";
}

// bfloat16 causal without a softcap: logits reach past exp's f32 overflow.
const std::string kCausalBf16 = R"({"name": "causal_bf16", "kind": "attention_forward", "dtype": "bfloat16",
  "outputs": {"lse": true}, "shape": {"q_heads": 2, "q_len": 512, "head_dim": 128}, "mask": {"type": "causal"},
  "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128}}})";

// Softcap, segment ids and sinks together, with a kv block computed in two halves.
const std::string kSoftcapSegmentsSinks = R"({"name": "softcap_segments_sinks", "kind": "attention_forward",
  "dtype": "bfloat16", "softcap": 30.0, "segment_ids": true, "sinks": true, "outputs": {"lse": true},
  "shape": {"q_heads": 2, "q_len": 512, "head_dim": 128}, "mask": {"type": "causal"},
  "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 256, "block_kv_compute": 128}}})";

// Segment ids over 1024 positions in blocks of 128: with the verification inputs' documents
// (docs/verification.md) every kind of step the forward tells apart across documents occurs,
// dead, inside one document and comparing ids, on partial and full tiles.
const std::string kDocuments = R"({"name": "documents", "kind": "attention_forward", "dtype": "bfloat16",
  "segment_ids": true, "outputs": {"lse": true}, "shape": {"batch": 2, "q_heads": 2, "q_len": 1024, "head_dim": 128},
  "mask": {"type": "causal"}, "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128}}})";

struct FeatureSpec {
  std::string json;
};

void PrintTo(const FeatureSpec& feature, std::ostream* out) { *out << spec_from(feature.json).name; }

class TpuKernelMatchesReference : public ::testing::TestWithParam<FeatureSpec> {};

TEST_P(TpuKernelMatchesReference, OnEveryPair) {
  const Spec spec = spec_from(GetParam().json);
  const TpuVerifyResult result = verify(spec, tpu_module(spec));
  EXPECT_TRUE(result.passed()) << spec.name << ": out error " << result.comparison.out_error << ", lse error "
                               << result.comparison.lse_error;
  EXPECT_GT(result.steps_run, 0);
}

INSTANTIATE_TEST_SUITE_P(Features, TpuKernelMatchesReference,
                         ::testing::Values(FeatureSpec{kMaskedRows}, FeatureSpec{kSinks}, FeatureSpec{kSegments},
                                           FeatureSpec{kComposed}, FeatureSpec{per_head_spec()},
                                           FeatureSpec{kCausalBf16}, FeatureSpec{kSoftcapSegmentsSinks},
                                           FeatureSpec{kDocuments}),
                         [](const auto& info) { return spec_from(info.param.json).name; });

// The range operands' layout: [batch][2][blocks], row 0 the minima, row 1 the maxima; a
// partial last block over the positions it has.
TEST(DocumentSkips, RangeRowsAreBatchRowThenBlock) {
  const std::vector<int32_t> ids = {0, 0, 1, 3, 3, /* batch 1 */ 7, 5, 5, 6, 9};
  EXPECT_EQ(block_range_rows(ids, 2, 5, 2), (std::vector<int32_t>{0, 1, 3, 0, 3, 3, 5, 5, 9, 7, 6, 9}));
}

// Tiles skipped across documents (docs/block-plan.md): the steps the CPU run reports as dead,
// inside one document and comparing ids are count_document_steps' for the inputs' packed
// documents (each batch row's ids, every head), and in the documents spec all three occur.
TEST(DocumentSkips, CountsAreTheRulesOnTheInputs) {
  for (const std::string& json : {kDocuments, kSegments, kSoftcapSegmentsSinks}) {
    const Spec spec = spec_from(json);
    const TpuVerifyResult result = verify(spec, tpu_module(spec));
    EXPECT_TRUE(result.passed()) << spec.name;
    const Shape& s = spec.shape;
    const AttentionInputs in = verification_inputs(spec, TpuVerifyOptions{}.seed);
    const TileShape tiles{s.q_len, s.kv_len, spec.tpu->block_q, spec.tpu->block_kv};
    DocumentStepCounts expected;
    for (int64_t b = 0; b < s.batch; ++b) {
      const std::vector<int32_t> q_ids(in.q_segment_ids.begin() + b * s.q_len, in.q_segment_ids.begin() + (b + 1) * s.q_len);
      const std::vector<int32_t> kv_ids(in.kv_segment_ids.begin() + b * s.kv_len,
                                        in.kv_segment_ids.begin() + (b + 1) * s.kv_len);
      const DocumentStepCounts row = count_document_steps(spec.masks, s.q_heads, tiles, q_ids, kv_ids);
      expected.planned += row.planned;
      expected.dead += row.dead;
      expected.one_document += row.one_document;
    }
    const DocumentStepCounts& run = result.document_steps;
    EXPECT_EQ(run.planned, expected.planned) << spec.name;
    EXPECT_EQ(run.dead, expected.dead) << spec.name;
    EXPECT_EQ(run.one_document, expected.one_document) << spec.name;
    if (json == kDocuments) {
      EXPECT_GT(run.dead, 0);
      EXPECT_GT(run.one_document, 0);
      EXPECT_GT(run.compared(), 0);
    }
  }
}

struct Edit {
  std::string from;  // an ECMAScript regex; every match is replaced, and one must exist
  std::string to;    // $1 names the first group
};

struct Mutation {
  std::string name;
  std::string spec;
  std::vector<Edit> edits;
};

void PrintTo(const Mutation& mutation, std::ostream* out) { *out << mutation.name; }

class PlantedBugIsCaught : public ::testing::TestWithParam<Mutation> {};

TEST_P(PlantedBugIsCaught, ByTheVerifier) {
  const Mutation& mutation = GetParam();
  const Spec spec = spec_from(mutation.spec);
  std::string module = tpu_module(spec);
  ASSERT_TRUE(verify(spec, module).passed()) << "the unmutated kernel must pass";
  for (const Edit& edit : mutation.edits) {
    const std::regex site(edit.from);
    ASSERT_TRUE(std::regex_search(module, site)) << "the mutation site is gone: " << edit.from;
    module = std::regex_replace(module, site, edit.to);
  }
  const TpuVerifyResult result = verify(spec, module);
  EXPECT_FALSE(result.passed()) << mutation.name << " went unnoticed: out error " << result.comparison.out_error
                                << ", lse error " << result.comparison.lse_error;
}

// Sub-tile values are named <value>_<sub-tile>, a softmax group's <value>_g<group>; (\d+)
// matches every copy.
INSTANTIATE_TEST_SUITE_P(
    Mutations, PlantedBugIsCaught,
    ::testing::Values(
        Mutation{"flipped_causal_comparison", kMaskedRows,
                 {{R"(arith.cmpi sle, %kv_pos_(\d+), %mask_0_bound)", "arith.cmpi slt, %kv_pos_$1, %mask_0_bound"}}},
        Mutation{"dropped_rescale", kComposed,
                 {{R"(%acc_sum_(\d+) = arith.addf %acc_scaled_g(\d+))", "%acc_sum_$1 = arith.addf %acc_prev_g$2"}}},
        // softcap 25 instead of 20: both constants it enters (scale / softcap, softcap · log2 e).
        Mutation{"wrong_softcap", kComposed,
                 {{R"(%scale_over_cap = arith.constant dense<[^>]*>)", "%scale_over_cap = arith.constant dense<8.0e-03>"},
                  {R"(%softcap_log2e = arith.constant dense<[^>]*>)", "%softcap_log2e = arith.constant dense<3.60673752e+01>"}}},
        Mutation{"off_by_one_q_index_map", kComposed,
                 {{"    return %b_index, %h_index, %q_block, %c0_i32",
                   "    %one = arith.constant 1 : i32\n    %below = arith.subi %q_block, %one : i32\n"
                   "    %q_shifted = arith.maxsi %below, %c0_i32 : i32\n    return %b_index, %h_index, %q_shifted, %c0_i32"}}},
        Mutation{"wrong_kv_head", kSinks, {{"%kv_head = arith.divsi %h_index, %c_group", "%kv_head = arith.divsi %c0_i32, %c_group"}}},
        Mutation{"no_sink_in_l", kSinks, {{"%l_init = arith.constant dense<7.812500e-03>", "%l_init = arith.constant dense<0.000000e+00>"}}},
        Mutation{"masked_rows_not_zeroed", kMaskedRows,
                 {{"arith.select %kept_any, %inv_l_kept, %zero_lanes", "arith.select %kept_any, %inv_l_kept, %inv_l_kept"}}},
        Mutation{"inverted_explicit_mask", per_head_spec(),
                 {{R"(arith.cmpi ne, %mask_bits_(\d+), %mask_zero)", "arith.cmpi eq, %mask_bits_$1, %mask_zero"}}},
        Mutation{"inverted_segment_ids", kSegments,
                 {{R"(arith.cmpi eq, %q_ids_(\d+), %kv_ids_\d+)", "arith.cmpi ne, %q_ids_$1, %kv_ids_$1"}}},
        // scale 0.25 instead of 0.2 (with softcap 20: scale / softcap).
        Mutation{"wrong_scale", kComposed,
                 {{R"(%scale_over_cap = arith.constant dense<[^>]*>)", "%scale_over_cap = arith.constant dense<1.25e-02>"}}},
        // Each feature removed outright, on the spec that has it together with the others.
        Mutation{"softcap_removed", kSoftcapSegmentsSinks,  // tanh(x) -> x: s passes uncapped
                 {{R"(math.tanh %s_over_cap_(\d+))", "arith.maximumf %s_over_cap_$1, %s_over_cap_$1"}}},
        Mutation{"sink_ignored", kSoftcapSegmentsSinks,  // m and l start as without a sink
                 {{"%m_init = vector.broadcast %sink_log2", "%m_init = vector.broadcast %mask_value"},
                  {"%l_init = arith.constant dense<7.812500e-03>", "%l_init = arith.constant dense<0.000000e+00>"}}},
        // The document skip's rule planted wrong (docs/block-plan.md): ranges that touch
        // (q.max == kv.min, or kv.max == q.min) taken as apart, so steps with keys to attend
        // are skipped; and the copy without the id comparison run on every live step.
        Mutation{"touching_q_range_taken_apart", kDocuments,
                 {{"%q_reaches_kv = arith.cmpi sge", "%q_reaches_kv = arith.cmpi sgt"}}},
        Mutation{"touching_kv_range_taken_apart", kDocuments,
                 {{"%kv_reaches_q = arith.cmpi sge", "%kv_reaches_q = arith.cmpi sgt"}}},
        Mutation{"one_document_copy_everywhere", kDocuments,
                 {{"scf.if %one_document", "scf.if %live"}}},
        Mutation{"segment_ids_ignored", kSoftcapSegmentsSinks,
                 {{R"(arith.cmpi eq, %q_ids_(\d+), %kv_ids_\d+)", "arith.cmpi eq, %q_ids_$1, %q_ids_$1"}}},
        Mutation{"rescale_of_l_dropped", kSoftcapSegmentsSinks,
                 {{R"(%l_scaled_g(\d+) = arith.mulf %alpha_g\d+, %l_prev_g\d+)",
                   "%l_scaled_g$1 = arith.maximumf %l_prev_g$1, %l_prev_g$1"}}},
        Mutation{"rescale_of_acc_dropped", kCausalBf16,
                 {{R"(%acc_sum_(\d+) = arith.addf %acc_scaled_g(\d+))", "%acc_sum_$1 = arith.addf %acc_prev_g$2"}}},
        // The running max pinned at 0: exact algebra (alpha = 1, lse = log l), so only
        // logits past 128 in base 2 (88.7 in base e), where exp2 overflows f32, show it.
        Mutation{"max_not_subtracted", kCausalBf16,
                 {{R"(%m_next_g(\d+) = arith.maximumf %m_prev_g\d+, %row_max_lanes_g\d+)",
                   "%m_next_g$1 = arith.subf %row_max_lanes_g$1, %row_max_lanes_g$1"}}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kgen
