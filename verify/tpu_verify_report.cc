#include "tpu_verify_report.h"

#include <llvm/Config/llvm-config.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace kgen {
namespace {

// 3 significant digits: what the printed report shows, and stable across reruns.
Json rounded(double value) {
  if (!std::isfinite(value)) return Json(std::to_string(value));  // JSON has no inf/nan
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return Json(std::stod(buffer));
}

}  // namespace

Json tpu_verify_facts(const Spec& spec, const TpuVerifyOptions& options, const TpuVerifyResult& result) {
  Json facts = {{"executor", "kgen-verify: the kernel's own MLIR lowered and JIT-compiled by MLIR " LLVM_VERSION_STRING
                       " on the CPU, run over the sampled grid with Mosaic's pipeline semantics"},
          {"reference", "float64 dense reference (docs/spec-format.md section 3)"},
          {"inputs", "kgen::verification_inputs: every feature made visible (docs/verification.md)"},
          {"seed", options.seed},
          {"max_pairs", options.max_pairs},
          {"sample", result.sample},
          {"grid_steps_run", result.steps_run},
          {"grid_steps_outside_sample", result.steps_skipped},
          {"out_error", rounded(result.comparison.out_error)},
          {"out_tolerance", result.tolerance.out_relative},
          {"lse_error", spec.lse ? rounded(result.comparison.lse_error) : Json()},
          {"lse_tolerance", result.tolerance.lse_absolute},
          {"passed", result.passed()}};
  if (spec.segment_ids) {
    const DocumentStepCounts& steps = result.document_steps;
    facts["document_steps"] = {{"planned", steps.planned},
                               {"dead", steps.dead},
                               {"one_document", steps.one_document},
                               {"compared", steps.compared()}};
  }
  return facts;
}

Json tpu_backward_facts(const Spec& spec, const TpuBackwardResult& result) {
  return {{"kernels", "the dq and dkv kernels, on the out and lse the forward kernel wrote (docs/backward.md)"},
          {"reference", "float64 gradients (docs/spec-format.md section 7, verify/dense_backward.h)"},
          {"sample", result.sample},
          {"grid_steps_run", result.steps_run},
          {"dq_error", rounded(result.dq_error)},
          {"dk_error", rounded(result.dk_error)},
          {"dv_error", rounded(result.dv_error)},
          {"dsinks_error", spec.sinks ? rounded(result.dsinks_error) : Json()},
          {"tolerance", result.tolerance},
          {"passed", result.passed()}};
}

Json tpu_decode_facts(const Spec& spec, const TpuVerifyOptions& options, const TpuDecodeVerifyResult& result) {
  Json facts = {{"executor", "kgen-verify: the decode kernel's own MLIR (and its combine's) lowered and JIT-compiled by MLIR " LLVM_VERSION_STRING
                             " on the CPU, its DMAs carried out by the host (verify/mosaic/dma_runtime.h)"},
                {"reference", "float64 dense_decode (docs/spec-format.md section 8)"},
                {"inputs", "kgen::decode_verification_inputs over decode_length_cases; values past kv_lens NaN (docs/decode.md)"},
                {"seed", options.seed},
                {"sample", result.sample},
                {"kv_lens_cases", result.lengths},
                {"grid_steps_run", result.steps_run},
                {"kv_dmas", result.kv_copies},
                {"kv_dmas_allowed", result.kv_copies_allowed},
                {"dma_schedule", result.schedule_mismatch.empty() ? Json("as docs/decode.md says") : Json(result.schedule_mismatch)},
                {"out_error", rounded(result.comparison.out_error)},
                {"out_tolerance", result.tolerance.out_relative},
                {"lse_error", spec.lse ? rounded(result.comparison.lse_error) : Json()},
                {"lse_tolerance", result.tolerance.lse_absolute},
                {"passed", result.passed()}};
  if (result.combine)
    facts["combine_alone"] = {{"out_error", rounded(result.combine->out_error)},
                              {"lse_error", spec.lse ? rounded(result.combine->lse_error) : Json()}};
  return facts;
}

}  // namespace kgen
