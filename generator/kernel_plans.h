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

// A file beside the kernel that a Python program writes for kgen gen: the tpu kernels'
// tpu_custom_call payload, which needs jaxlib's Mosaic serializer
// (python/kgen/jax/write_custom_calls.py). kgen lists it in MANIFEST.json and, once the
// spec's folder is written, runs the writer over it (`python -m <writer> --out DIR [--check]
// SPEC...`, companion_writers.h), so `kgen gen` alone writes and checks a whole folder.
struct CompanionFile {
  std::string extension;  // "custom_call.json"
  std::string role;       // its MANIFEST.json role: "custom_call"
  std::string writer;     // the Python module that writes it: "kgen.jax.write_custom_calls"
};

struct KernelPlan {
  std::string target;     // a name from the target registry (targets/target.h)
  std::string extension;  // "mlir", "cu"
  std::string template_path;
  std::string symbol;
  Json context;
  // The kernel's operands (tests/mosaic_dialect's OPERANDS.json format), written beside
  // the kernel as <name>.<target>.operands.json; null when the target writes none.
  Json operands;
  // What a CUDA kernel file promises (entry points, parameters, launch bounds, dynamic
  // shared memory; docs/audit.md), written into its MANIFEST.json entry for kgen audit to
  // check against the compiler's view; null for targets the audit does not read.
  Json interface = nullptr;
  std::vector<ExtraFile> extra_files = {};
  // "" for the forward; "dq" or "dkv" for a backward kernel, which names its files and symbol
  // (docs/naming.md).
  std::string pass = "";
  // The block plan the kernel's scalar-prefetch operands are built from, as `kgen plan` prints
  // it, written beside the kernel as <name>.<target>[.<pass>].plan.json so that callers
  // (python/kgen) read the tables instead of computing them; null when the target writes none.
  Json plan_file = nullptr;
  std::vector<CompanionFile> companions = {};
  // The schedule a CUDA kernel's machine code must show, as thresholds the compile check
  // (verify/cuda/sass_schedule.py, PROMISES) holds its SASS to, e.g. {"mma_per_iteration": 16},
  // written into its MANIFEST.json entry; null when the plan promises none.
  Json schedule = nullptr;
};

// The plans of every target the spec names, in the registry's order (targets/target.h), each
// target's forward first, then (for a spec with "backward": true) its backward kernels.
std::vector<KernelPlan> plan_kernels(const Spec& spec);

// The targets a spec with "backward": true names that generate no backward kernel yet
// (docs/backward.md); MANIFEST.json lists them and kgen gen says so.
std::vector<std::string> targets_without_backward(const Spec& spec);

// The targets a decode spec names that generate no decode kernel (yet) while another does
// (docs/decode.md): MANIFEST.json lists them and kgen gen says so. When none of the named
// targets does, plan_kernels refuses the spec instead.
std::vector<std::string> targets_without_decode(const Spec& spec);

}  // namespace kgen
