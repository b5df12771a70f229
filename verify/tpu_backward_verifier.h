// Verifies the generated backward kernels of a spec with "backward": true on the CPU
// (docs/backward.md): the forward kernel runs first and its own out and lse are the
// residuals, as a caller passes them; then the dq and the dkv kernel run from their MLIR,
// and dq, dk, dv and dsinks are compared with the float64 gradients of
// verify/dense_backward.h within docs/spec-format.md §7's tolerances.
#pragma once

#include <memory>
#include <string>

#include "compare.h"
#include "spec.h"
#include "tpu_verifier.h"

namespace kgen {

struct TpuBackwardResult {
  double dq_error = 0, dk_error = 0, dv_error = 0;
  double dsinks_error = 0;  // 0 without sinks
  double tolerance = 0;
  std::string sample;  // what was run and compared, in words
  int64_t steps_run = 0;  // dq and dkv kernels
  double compile_seconds = 0, run_seconds = 0;
  bool passed() const {
    return dq_error <= tolerance && dk_error <= tolerance && dv_error <= tolerance && dsinks_error <= tolerance;
  }
};

// The inputs, the residuals (the forward kernel run once on the sample) and the reference
// gradients of one verification, so that variants of the backward kernels (planted bugs) are
// checked against the same data.
class TpuBackwardVerification {
 public:
  // Throws std::runtime_error when the forward module does not compile or run.
  TpuBackwardVerification(const Spec& spec, const std::string& forward_module, const TpuVerifyOptions& options);
  ~TpuBackwardVerification();
  TpuBackwardVerification(TpuBackwardVerification&&) noexcept;

  // Compiles and runs both kernels over the sampled grid and compares. Throws
  // std::runtime_error (with MLIR's diagnostics) when a module does not compile or does not
  // fit its operands.
  TpuBackwardResult check(const std::string& dq_module, const std::string& dkv_module) const;

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

}  // namespace kgen
