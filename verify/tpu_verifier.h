// Verifies a generated Mosaic kernel on the CPU: its own MLIR text is compiled by the
// executor in verify/mosaic/, run over its grid with Mosaic's pipeline semantics on the
// inputs of verification_inputs.h, and compared with the float64 reference
// (docs/spec-format.md §3).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compare.h"
#include "document_skips.h"
#include "mosaic_kernel.h"
#include "spec.h"

namespace kgen {

struct TpuVerifyOptions {
  uint64_t seed = 1;
  // Sampling bounds: at most this many (batch, head) pairs run, every q block and kv
  // step of each; reference rows per pair are sampled when a pair's dense cost
  // (q_len * kv_len * (head_dim + head_dim_v)) exceeds `dense_row_budget`.
  int max_pairs = 3;
  int64_t dense_row_budget = int64_t{1} << 28;
  // The CPU JIT's LLVM optimization level (0..3). It changes speed, not results: the
  // lowering sets no fast-math flags, so every level computes the same IEEE operations.
  // -O0: the unrolled kernels JIT 3-4 times faster than at -O2 and run about as fast
  // (kgen verify, wall: splash 4.2 s against 11.1 s, llama4_chunked_causal 23.4 s against
  // 40.8 s), and a mutant is compiled once and runs briefly.
  int llvm_opt_level = 0;
};

struct TpuVerifyResult {
  Comparison comparison;
  Tolerance tolerance;
  std::string sample;  // what was run and compared, in words
  int64_t steps_run = 0;
  int64_t steps_skipped = 0;
  // The sampled pairs' steps the plan keeps, and of those, with segment ids, the dead ones
  // (skipped by the document ranges) and those inside one document (no id comparison).
  DocumentStepCounts document_steps;
  double compile_seconds = 0;
  double run_seconds = 0;
  bool passed() const { return comparison.within(tolerance); }
};

// The inputs, the reference and the sample of one verification, computed once, so that
// many variants of a kernel (the mutants of verify/mutation_score.h) are checked against
// the same data. Holds no MLIR state: it can be copied into forked processes.
class TpuVerification {
 public:
  TpuVerification(const Spec& spec, const TpuVerifyOptions& options);
  ~TpuVerification();
  TpuVerification(TpuVerification&&) noexcept;

  // Compiles and runs `module_text` over the sampled grid and compares with the reference.
  // Throws std::runtime_error (with MLIR's diagnostics) when the module does not compile
  // or does not fit the spec's operands.
  TpuVerifyResult check(const std::string& module_text, const std::string& module_name) const;

  // check() in its two halves: compile (throws when the module is not a kernel MLIR and the
  // executor accept), then run and compare (throws when the kernel misbehaves at run time,
  // e.g. an index map leaving its array).
  mosaic::MosaicKernel compile(const std::string& module_text, const std::string& module_name) const;
  TpuVerifyResult run(const mosaic::MosaicKernel& kernel) const;

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

// TpuVerification(spec, options).check(module_text, module_name).
TpuVerifyResult verify_tpu_kernel(const Spec& spec, const std::string& module_text,
                                  const std::string& module_name, const TpuVerifyOptions& options);

}  // namespace kgen
