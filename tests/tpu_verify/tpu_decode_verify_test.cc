// Generated tpu decode kernels (and their combines), executed on the CPU from their MLIR against
// dense_decode over every kv_lens case (docs/decode.md "Checking"): every feature passes, every
// split count of one spec passes, and every planted bug fails, by its numbers, by reading more
// than the live blocks, or by a DMA the executor refuses.
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "spec.h"
#include "spec_outputs.h"
#include "template_engine.h"
#include "tpu_decode_verifier.h"

namespace kgen {
namespace {

Spec spec_from(const std::string& json) { return parse_spec(json, "."); }

// The generated files of a spec, by name.
std::map<std::string, std::string> generate(const Spec& spec) {
  TemplateEngine engine([](const std::string& path) {
    std::ifstream in(std::string(KGEN_SOURCE_DIR) + "/templates/" + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  });
  std::map<std::string, std::string> files;
  for (const GeneratedFile& file : render_spec_outputs(spec, engine, runtime_digests(KGEN_SOURCE_DIR)))
    files[file.path.substr(file.path.find('/') + 1)] = file.content;
  return files;
}

struct Modules {
  std::string kernel, combine;  // combine empty for an unsplit kernel
};

Modules modules_of(const Spec& spec) {
  std::map<std::string, std::string> files = generate(spec);
  return {files.at(spec.name + ".tpu.mlir"), files.count(spec.name + ".tpu.combine.mlir") ? files.at(spec.name + ".tpu.combine.mlir") : ""};
}

TpuDecodeVerifyResult verify(const Spec& spec, const Modules& modules) {
  TpuVerifyOptions options;
  options.max_pairs = 64;  // small specs: every kv head
  return TpuDecodeVerification(spec, options).check(modules.kernel, spec.name + ".tpu.mlir", modules.combine,
                                                    spec.name + ".tpu.combine.mlir");
}

std::string describe(const TpuDecodeVerifyResult& r) {
  std::ostringstream out;
  out << "out error " << r.comparison.out_error << ", lse error " << r.comparison.lse_error << ", kv DMAs "
      << r.kv_copies << " of " << r.kv_copies_allowed;
  if (r.combine) out << "; combine alone: out " << r.combine->out_error << ", lse " << r.combine->lse_error;
  return out.str();
}

// GQA 8/2 over a paged cache: two pages per kv block, two sub-tiles per block, lse.
const std::string kPagedGqa = R"({"name": "paged_gqa", "kind": "attention_decode", "dtype": "bfloat16",
  "outputs": {"lse": true}, "shape": {"batch": 3, "q_heads": 8, "kv_heads": 2, "q_len": 1, "kv_len": 1024, "head_dim": 128},
  "paged": {"page_size": 128}, "targets": {"tpu": {"generation": "v5e", "block_kv": 256, "block_kv_compute": 128}}})";

// Three splits, two new tokens, sinks (in the combine), lse.
const std::string kSplitSinks = R"({"name": "split_sinks", "kind": "attention_decode", "dtype": "bfloat16", "sinks": true,
  "outputs": {"lse": true}, "shape": {"batch": 3, "q_heads": 8, "kv_heads": 2, "q_len": 2, "kv_len": 1024, "head_dim": 128},
  "paged": {"page_size": 128}, "targets": {"tpu": {"generation": "v5e", "block_kv": 256, "block_kv_compute": 128, "splits": 3}}})";

// MQA, three new tokens, a window, a softcap, float32, head_dim_v != head_dim, a contiguous cache.
const std::string kLocalSoftcapF32 = R"({"name": "local_softcap_f32", "kind": "attention_decode", "dtype": "float32",
  "softcap": 20.0, "outputs": {"lse": true},
  "shape": {"batch": 2, "q_heads": 4, "kv_heads": 1, "q_len": 3, "kv_len": 1024, "head_dim": 64, "head_dim_v": 128},
  "mask": {"type": "local", "left": 200, "right": 0}, "targets": {"tpu": {"generation": "v6e", "block_kv": 128}}})";

// Blocks smaller than a page, a window, sinks, two splits, float16.
const std::string kPagePartF16 = R"({"name": "page_part_f16", "kind": "attention_decode", "dtype": "float16", "sinks": true,
  "shape": {"batch": 2, "q_heads": 2, "kv_heads": 2, "q_len": 1, "kv_len": 1024, "head_dim": 128},
  "paged": {"page_size": 512}, "mask": {"type": "local", "left": 300, "right": 0},
  "targets": {"tpu": {"generation": "v5e", "block_kv": 128, "splits": 2}}})";

// MHA, sixteen new tokens (a 16-row q tile), a contiguous cache, two splits, lse.
const std::string kMhaSixteenTokens = R"({"name": "mha_sixteen_tokens", "kind": "attention_decode", "dtype": "bfloat16",
  "outputs": {"lse": true}, "shape": {"batch": 2, "q_heads": 2, "q_len": 16, "kv_len": 512, "head_dim": 128},
  "targets": {"tpu": {"generation": "v5p", "block_kv": 128, "splits": 2}}})";

// Sinks in an unsplit kernel (the softmax's first logit), a paged cache, lse.
const std::string kPagedSinksUnsplit = R"({"name": "paged_sinks_unsplit", "kind": "attention_decode", "dtype": "bfloat16",
  "sinks": true, "outputs": {"lse": true},
  "shape": {"batch": 2, "q_heads": 4, "kv_heads": 2, "q_len": 1, "kv_len": 512, "head_dim": 128},
  "paged": {"page_size": 128}, "targets": {"tpu": {"generation": "v5e", "block_kv": 128, "splits": 1}}})";

struct FeatureSpec {
  std::string json;
};
void PrintTo(const FeatureSpec& feature, std::ostream* out) { *out << spec_from(feature.json).name; }

class TpuDecodeKernelMatchesReference : public ::testing::TestWithParam<FeatureSpec> {};

TEST_P(TpuDecodeKernelMatchesReference, OverEveryLengthCase) {
  const Spec spec = spec_from(GetParam().json);
  const TpuDecodeVerifyResult result = verify(spec, modules_of(spec));
  EXPECT_TRUE(result.passed()) << spec.name << ": " << describe(result);
  EXPECT_GT(result.steps_run, 0);
  EXPECT_GT(result.kv_copies, 0);
  EXPECT_GE(result.lengths.size(), 8u);
}

INSTANTIATE_TEST_SUITE_P(Features, TpuDecodeKernelMatchesReference,
                         ::testing::Values(FeatureSpec{kPagedGqa}, FeatureSpec{kSplitSinks}, FeatureSpec{kLocalSoftcapF32},
                                           FeatureSpec{kPagePartF16}, FeatureSpec{kMhaSixteenTokens},
                                           FeatureSpec{kPagedSinksUnsplit}),
                         [](const auto& info) { return spec_from(info.param.json).name; });

// Every split count one sequence's four blocks allow, on a paged cache with sinks (each count
// has its own kernel and, past one, a combine).
TEST(TpuDecodeSplits, EveryCountPasses) {
  for (int splits = 1; splits <= 4; ++splits) {
    const Spec spec = spec_from(R"({"name": "every_split", "kind": "attention_decode", "dtype": "bfloat16", "sinks": true,
      "outputs": {"lse": true}, "shape": {"batch": 2, "q_heads": 4, "kv_heads": 2, "q_len": 1, "kv_len": 512, "head_dim": 128},
      "paged": {"page_size": 64}, "targets": {"tpu": {"generation": "v5e", "block_kv": 128, "splits": )" +
                                std::to_string(splits) + "}}}");
    const Modules modules = modules_of(spec);
    EXPECT_EQ(modules.combine.empty(), splits == 1);
    const TpuDecodeVerifyResult result = verify(spec, modules);
    EXPECT_TRUE(result.passed()) << splits << " splits: " << describe(result);
  }
}

// A planted bug: a regex replacement (every match; at least one must exist) in the kernel or
// the combine.
struct Plant {
  std::string name;
  std::string spec;
  bool in_combine;
  std::string from, to;
};
void PrintTo(const Plant& plant, std::ostream* out) { *out << plant.name; }

std::string planted(const std::string& text, const Plant& plant) {
  const std::regex pattern(plant.from);
  EXPECT_TRUE(std::regex_search(text, pattern)) << plant.name << ": '" << plant.from << "' matches nothing";
  return std::regex_replace(text, pattern, plant.to);
}

class TpuDecodePlantedBug : public ::testing::TestWithParam<Plant> {};

TEST_P(TpuDecodePlantedBug, Fails) {
  const Plant& plant = GetParam();
  const Spec spec = spec_from(plant.spec);
  Modules modules = modules_of(spec);
  std::string& target = plant.in_combine ? modules.combine : modules.kernel;
  target = planted(target, plant);
  TpuVerifyOptions options;
  options.max_pairs = 64;
  const TpuDecodeVerification verification(spec, options);
  // The planted module must compile: only its numbers or its run may give it away.
  const mosaic::MosaicKernel kernel = verification.compile(modules.kernel, spec.name + ".tpu.mlir");
  std::optional<mosaic::MosaicKernel> combine;
  if (!modules.combine.empty()) combine.emplace(verification.compile(modules.combine, spec.name + ".tpu.combine.mlir"));
  try {
    const TpuDecodeVerifyResult result = verification.run(kernel, combine ? &*combine : nullptr);
    EXPECT_FALSE(result.passed()) << plant.name << " passed: " << describe(result);
    std::cout << plant.name << ": FAIL by " << describe(result) << "\n";
  } catch (const std::exception& error) {
    std::cout << plant.name << ": refused at run time: " << error.what() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bugs, TpuDecodePlantedBug,
    ::testing::Values(
        // The kernel takes each sequence as one position longer than kv_lens says.
        Plant{"off_by_one_at_kv_lens", kPagedGqa, false, R"(%len = memref\.load (%kv_lens\[%b_idx\] : [^\n]*))",
              "%len_read = memref.load $1\n    %len = arith.addi %len_read, %c1_i32 : i32"},
        // The kernel ignores kv_lens: every sequence is taken at the cache's capacity.
        Plant{"kv_lens_ignored", kPagedGqa, false, R"(%len(_np)? = memref\.load %kv_lens\[[^\n]*)",
              "%len$1 = arith.constant 1024 : i32"},
        // Every sequence reads sequence 0's pages (at every copy and wait).
        Plant{"wrong_page_lookup", kPagedGqa, false, R"(%page_table\[%b_idx(_np)?, )", "%page_table[%c0, "},
        // The page table ignored: logical page n read from pool page n.
        Plant{"page_table_ignored", kPagedGqa, false,
              R"(%page_(\w+) = memref\.load %page_table\[[^\n]*)", "%page_$1 = arith.index_cast %logical_idx_$1 : index to i32"},
        // No softcap: the logits are scale · qk (the tanh's argument times the cap).
        Plant{"softcap_removed", kLocalSoftcapF32, false, R"(%s_tanh_(\d+) = math\.tanh %s_over_cap_\d+)",
              "%s_tanh_$1 = arith.addf %s_over_cap_$1, %s_zero"},
        // The combine ignores the partials' lse: every split weighs the same.
        Plant{"combine_ignores_lse", kSplitSinks, true, R"(%weights = math\.exp %lse_shifted)",
              "%lse_ignored = arith.constant dense<0.0> : vector<3x8x128xf32>\n    %weights = math.exp %lse_ignored"},
        // The sink counted twice in an unsplit kernel: l starts at 2 instead of exp2(0) = 1.
        Plant{"sink_added_twice_unsplit", kPagedSinksUnsplit, false, R"(%l_init = arith\.constant dense<1\.000000e\+00>)",
              "%l_init = arith.constant dense<2.000000e+00>"},
        // The combine weights the partials by exp(lse_s), not exp(lse_s - max).
        Plant{"combine_without_max_subtraction", kSplitSinks, true,
              R"(%m_safe = arith\.select %nothing, %zero_lanes, %m )", "%m_safe = arith.select %nothing, %zero_lanes, %zero_lanes "},
        // The sink's weight counted once per split (3), as split kernels that each added it would.
        Plant{"sink_added_per_split", kSplitSinks, true, R"(%l = arith\.addf %l_parts, %sink_weight)",
              "%c_splits_lanes = arith.constant dense<3.0> : vector<8x128xf32>\n    %sink_per_split = arith.mulf %sink_weight, "
              "%c_splits_lanes : vector<8x128xf32>\n    %l = arith.addf %l_parts, %sink_per_split"},
        // Values past kv_lens (NaN here) reach P·V: 0 · NaN.
        Plant{"stale_values_unguarded", kPagedGqa, false, R"(%v_guarded_(\d+) = arith\.select %v_valid_\d+, %v_\d+, %v_zero)",
              "%v_guarded_$1 = arith.select %v_valid_$1, %v_$1, %v_$1"},
        // The accumulator is not rescaled when the running max moves.
        Plant{"rescale_removed", kPagedGqa, false, R"(%acc_scaled = arith\.mulf %alpha, %acc_prev)",
              "%acc_scaled = arith.addf %acc_prev, %acc_zero"},
        // The next block is copied into the buffer being computed on.
        Plant{"prefetch_into_the_buffer_in_use", kPagedGqa, false, R"(%slot_next = arith\.subi %c1_i32, %slot)",
              "%slot_next = arith.addi %slot, %c0_i32"},
        // One block past kv_lens is read (masked, so only the DMA count shows it).
        Plant{"reads_past_kv_lens", kMhaSixteenTokens, false, R"(%split_last = arith\.muli %split_after, %live_blocks)",
              "%live_more = arith.addi %live_blocks, %c1_i32 : i32\n    %split_last = arith.muli %split_after, %live_more"},
        // Blocks wholly left of the window are read (masked, so only the DMA count shows it).
        Plant{"reads_left_of_the_window", kLocalSoftcapF32, false,
              R"(%lo(_np)? = arith\.maxsi %first_block(_np)?, %c_zero_block : i32)", "%lo$1 = arith.constant 0 : i32"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kgen
