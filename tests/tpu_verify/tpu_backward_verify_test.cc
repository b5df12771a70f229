// The generated tpu backward kernels (dq and dkv), executed on the CPU from their MLIR after
// the forward kernel wrote their residuals, against the float64 gradients of
// docs/spec-format.md §7: every feature passes, and each planted bug fails.
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "spec.h"
#include "spec_outputs.h"
#include "template_engine.h"
#include "tpu_backward_verifier.h"

namespace kgen {
namespace {

struct Modules {
  std::string forward, dq, dkv;
};

Modules tpu_modules(const Spec& spec) {
  TemplateEngine engine([](const std::string& path) {
    std::ifstream in(std::string(KGEN_SOURCE_DIR) + "/templates/" + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  });
  Modules modules;
  auto ends_with = [](const std::string& path, const std::string& tail) {
    return path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const GeneratedFile& file : render_spec_outputs(spec, engine, runtime_digests(KGEN_SOURCE_DIR))) {
    if (ends_with(file.path, ".tpu.mlir")) modules.forward = file.content;
    if (ends_with(file.path, ".tpu.dq.mlir")) modules.dq = file.content;
    if (ends_with(file.path, ".tpu.dkv.mlir")) modules.dkv = file.content;
  }
  return modules;
}

TpuVerifyOptions every_group() {
  TpuVerifyOptions options;
  options.max_pairs = 64;  // small specs: every (batch, kv head) group
  return options;
}

struct Case {
  const char* name;
  const char* json;  // the spec's fields besides name, kind and backward
};

// Each feature of §7 at least once: dtypes, masks (predicate and bitmask, partial and full
// tiles), softcap, sinks, segment ids, GQA and MQA, head_dim_v != head_dim, batch, rows with
// nothing to attend (lse = -inf), sub-tiles (block_kv_compute < block_kv) and block_q above
// the lane width (repeats in both kernels).
const Case kCases[] = {
    {"f32_causal_softcap_gqa",
     R"("shape": {"batch": 2, "q_heads": 4, "kv_heads": 2, "q_len": 256, "kv_len": 256, "head_dim": 128},
        "dtype": "float32", "softcap": 20.0, "mask": {"type": "causal"},
        "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 256, "block_kv_compute": 128}})"},
    {"bf16_local_sinks_mqa",
     R"("shape": {"q_heads": 4, "kv_heads": 1, "q_len": 512, "kv_len": 512, "head_dim": 64},
        "dtype": "bfloat16", "sinks": true, "mask": {"type": "local", "left": 100, "right": 0},
        "targets": {"tpu": {"generation": "v6e", "block_q": 256, "block_kv": 256, "block_kv_compute": 128}})"},
    {"f16_segment_ids_dv256",
     R"("shape": {"batch": 2, "q_heads": 2, "q_len": 256, "kv_len": 512, "head_dim": 128, "head_dim_v": 256},
        "dtype": "float16", "segment_ids": true, "mask": {"type": "causal"},
        "targets": {"tpu": {"generation": "v5e", "block_q": 256, "block_kv": 256, "block_kv_compute": 256}})"},
    {"bf16_per_head_bitmask_softcap",
     R"("shape": {"q_heads": 2, "q_len": 256, "kv_len": 256, "head_dim": 128}, "dtype": "bfloat16", "softcap": 30.0,
        "mask": {"type": "per_head", "masks": [{"type": "local", "left": 40, "right": 40}, {"type": "prefix_lm", "prefix": 64}]},
        "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128, "block_kv_compute": 128}})"},
    {"f32_full_d192_masked_rows",
     R"("shape": {"q_heads": 2, "q_len": 256, "kv_len": 384, "head_dim": 192, "head_dim_v": 128}, "dtype": "float32",
        "mask": {"type": "causal", "offset": -64},
        "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128, "block_kv_compute": 128}})"},
};

Spec spec_of(const Case& c) {
  return parse_spec(std::string(R"({"name": ")") + c.name + R"(", "kind": "attention_forward", "backward": true, )" +
                        c.json + "}",
                    ".");
}

class TpuBackwardMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(TpuBackwardMatchesReference, OnEveryGroup) {
  const Spec spec = spec_of(GetParam());
  const Modules modules = tpu_modules(spec);
  const TpuBackwardResult result =
      TpuBackwardVerification(spec, modules.forward, every_group()).check(modules.dq, modules.dkv);
  EXPECT_TRUE(result.passed()) << "dq " << result.dq_error << ", dk " << result.dk_error << ", dv " << result.dv_error
                               << ", dsinks " << result.dsinks_error << " (tolerance " << result.tolerance << ")";
  EXPECT_GT(result.steps_run, 0);
}

INSTANTIATE_TEST_SUITE_P(Features, TpuBackwardMatchesReference, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Softcap, sinks, a group of two q heads per kv head and an asymmetric (causal) mask, so that
// every planted bug below changes some gradient.
const Case kPlantedBugSpec = {
    "planted",
    R"("shape": {"q_heads": 4, "kv_heads": 2, "q_len": 256, "kv_len": 256, "head_dim": 128}, "dtype": "bfloat16",
       "softcap": 20.0, "sinks": true, "mask": {"type": "causal"},
       "targets": {"tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128, "block_kv_compute": 128}})"};

struct PlantedBug {
  const char* name;
  bool in_dkv;  // else in dq
  const char* site;
  const char* to;
};

const PlantedBug kPlantedBugs[] = {
    // ds without the tanh derivative 1 - t²
    {"dq_drops_softcap_derivative", false, R"(%ds_(\d+) = arith.mulf %ds_capped_\d+, %tanh_grad_\d+)",
     "%ds_$1 = arith.mulf %ds_capped_$1, %one_s"},
    {"dkv_drops_softcap_derivative", true, R"(%ds_(\d+) = arith.mulf %ds_capped_\d+, %tanh_grad_\d+)",
     "%ds_$1 = arith.mulf %ds_capped_$1, %one_s"},
    // delta = 0: ds = p · dp
    {"dq_wrong_delta", false, R"(%dp_centered_(\d+) = arith.subf %dp_\d+, %\w+ :)", "%dp_centered_$1 = arith.subf %dp_$1, %s_zero :"},
    {"dkv_wrong_delta", true, R"(%dp_centered_(\d+) = arith.subf %dp_\d+, %delta_s :)",
     "%dp_centered_$1 = arith.subf %dp_$1, %s_zero :"},
    // delta from dout · dout instead of dout · out
    {"dkv_delta_of_dout_only", true, R"(%dout_out = arith.mulf %dout_f32, %out_f32)", "%dout_out = arith.mulf %dout_f32, %dout_f32"},
    // dk and dv cleared at every q head: only the group's last head is summed
    {"dkv_missing_group_sum", true, R"(%first = arith.andi %first_head, %first_q_step)",
     "%first = arith.andi %first_q_step, %first_q_step"},
    // dsinks with the wrong sign
    {"dq_dsinks_sign", false, R"(%dsinks_tile = arith.negf %sink_tile : vector<8x128xf32>)",
     "%dsinks_tile = arith.addf %sink_tile, %sink_tile : vector<8x128xf32>"},
    // the dkv kernel's mask evaluated on untransposed positions: q along sublanes, kv along lanes
    {"dkv_mask_transposed", true, R"(%q_iota_(\d+) = tpu.iota \{dimensions = array<i32: 1>\})",
     "%q_iota_$1 = tpu.iota {dimensions = array<i32: 0>}"},
    {"dkv_mask_transposed_kv", true, R"(%kv_iota_(\d+) = tpu.iota \{dimensions = array<i32: 0>\})",
     "%kv_iota_$1 = tpu.iota {dimensions = array<i32: 1>}"},
    // dk without its scale
    {"dkv_dk_unscaled", true, R"(%dk_f32 = arith.mulf %dk_acc, %scale)", "%dk_f32 = arith.addf %dk_acc, %dk_acc"},
};

// One test for all the bugs: the forward run and the reference are computed once (ctest runs
// each test in its own process). The clean modules pass the same verification first, so each
// failure is its bug's.
TEST(PlantedBackwardBugs, EachIsCaughtByTheVerifier) {
  const Spec spec = spec_of(kPlantedBugSpec);
  const Modules clean = tpu_modules(spec);
  const TpuBackwardVerification verification(spec, clean.forward, every_group());
  ASSERT_TRUE(verification.check(clean.dq, clean.dkv).passed());
  for (const PlantedBug& bug : kPlantedBugs) {
    SCOPED_TRACE(bug.name);
    Modules modules = clean;
    std::string& target = bug.in_dkv ? modules.dkv : modules.dq;
    const std::string planted = std::regex_replace(target, std::regex(bug.site), bug.to);
    ASSERT_NE(planted, target) << "the site " << bug.site << " matches nothing";
    target = planted;
    const TpuBackwardResult result = verification.check(modules.dq, modules.dkv);
    EXPECT_FALSE(result.passed()) << "dq " << result.dq_error << ", dk " << result.dk_error << ", dv " << result.dv_error
                                  << ", dsinks " << result.dsinks_error;
  }
}

}  // namespace
}  // namespace kgen
