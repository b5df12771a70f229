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
  return {{"executor", "kgen-verify: the kernel's own MLIR lowered and JIT-compiled by MLIR " LLVM_VERSION_STRING
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
}

}  // namespace kgen
