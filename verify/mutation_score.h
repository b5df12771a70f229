// The mutation score of the tpu verification: how many systematic mutants of a generated
// kernel (verify/mosaic/mutants.h) `kgen verify` rejects. Each mutant runs in a forked
// process, so one that crashes or loops (an index moved out of its buffer, a loop step of
// 0) is isolated, and counted as killed; one that MLIR rejects is invalid and not counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mutants.h"
#include "spec.h"
#include "tpu_verifier.h"

namespace kgen {

struct MutationOptions {
  uint64_t seed = 1;     // chooses the sample (and the verification inputs, via `verify`)
  std::string filter;    // only mutants of ops whose source line contains this text
  int64_t sample = 0;    // run at most this many mutants, drawn at random; 0: all
  int jobs = 1;          // mutants verified at once
  TpuVerifyOptions verify;
};

enum class MutantFate { kKilled, kCrashed, kTimedOut, kSurvived, kInvalid };
const char* fate_name(MutantFate fate);

struct MutantOutcome {
  mosaic::Mutant mutant;
  MutantFate fate = MutantFate::kInvalid;
  std::string detail;  // errors found, the signal, or MLIR's first diagnostic
};

struct MutationReport {
  int64_t enumerated = 0;  // mutants of the module
  int64_t selected = 0;    // of those, the ones the filter kept; outcomes holds the sampled ones
  std::vector<MutantOutcome> outcomes;

  int64_t count(MutantFate fate) const;
  int64_t killed() const;   // numerics, crashes and time-outs
  int64_t counted() const;  // killed + survived: invalid mutants say nothing of the check
  double score() const;     // killed / counted, 1 when nothing counted
};

// How a variant of the module under test is verified: `compile` builds it (throwing when MLIR
// or the executor rejects it: an invalid mutant) and returns the check of its outputs, which
// says whether they pass and throws when the kernel fails at run time (a killed mutant). A
// check may compile and run other modules beside the variant (a decode kernel's combine).
struct MutantVerdict {
  bool passed = false;
  std::string errors;  // the errors found, in words
};
class MutantCheck {
 public:
  virtual ~MutantCheck() = default;
  virtual std::function<MutantVerdict()> compile(const std::string& text, const std::string& name) const = 0;
};

// Verifies the unmutated module first (it must pass: throws std::runtime_error otherwise),
// then every sampled mutant. Mutants time out after ten times the unmutated run plus 10 s.
MutationReport run_mutants(const MutantCheck& check, const std::string& module_text, const std::string& module_name,
                           const MutationOptions& options);

// A tpu forward kernel's verification (TpuVerification) as a mutant check.
std::unique_ptr<MutantCheck> forward_mutant_check(const Spec& spec, const TpuVerifyOptions& options);

// run_mutants with forward_mutant_check(spec, options.verify).
MutationReport run_mutants(const Spec& spec, const std::string& module_text, const std::string& module_name,
                           const MutationOptions& options);

}  // namespace kgen
