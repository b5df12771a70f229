// Per-target kernel plans: every number, spelling and decision a target's template
// needs, as the JSON context the template engine substitutes. Templates decide nothing.
#pragma once

#include <string>
#include <vector>

#include "block_plan.h"
#include "json_fields.h"
#include "spec.h"

namespace kgen {

// A file rendered beside the kernel from its own template and context, written as
// <name>.<target>.<extension> with the same provenance header (e.g. sm90a's launcher header).
struct ExtraFile {
  std::string template_path;
  std::string extension;  // "h"
  std::string role;       // its MANIFEST.json role: "launcher"
  Json context;
};

struct KernelPlan {
  std::string target;    // "tpu", "sm90a", "sm100a"
  std::string extension;  // "mlir", "cu"
  std::string template_path;
  std::string symbol;
  bool implemented = false;  // false: the template is a marked placeholder
  Json context;
  // The kernel's operands (tests/mosaic_dialect's OPERANDS.json format), written beside
  // the kernel as <name>.<target>.operands.json; null when the target writes none.
  Json operands;
  // What a CUDA kernel file promises (entry points, parameters, launch bounds, dynamic
  // shared memory; docs/audit.md), written into its MANIFEST.json entry for kgen audit to
  // check against the compiler's view; null for targets the audit does not read.
  Json interface = nullptr;
  std::vector<ExtraFile> extra_files = {};
};

// The tile schedule of the tpu target (Splash's MaskInfo); SpecError if it does not fit
// the generation's scalar memory.
SplashPlan tpu_splash_plan(const Spec& spec);
TileShape gpu_tile_shape(const Spec& spec, const GpuTarget& target);

KernelPlan plan_tpu_kernel(const Spec& spec);
KernelPlan plan_gpu_kernel(const Spec& spec, const std::string& target);

// The plans of every target the spec names, in the order tpu, sm90a, sm100a.
std::vector<KernelPlan> plan_kernels(const Spec& spec);

}  // namespace kgen
