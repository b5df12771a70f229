// The mutation score of a tpu decode verification (docs/verification.md): a decode kernel is
// two modules, so each is mutated in turn while the other runs as generated.
#pragma once

#include <memory>
#include <string>

#include "mutation_score.h"
#include "tpu_decode_verifier.h"

namespace kgen {

// Mutants of the split kernel, verified with the combine as generated (`combine_text` empty
// for an unsplit kernel).
std::unique_ptr<MutantCheck> decode_kernel_check(const TpuDecodeVerification& verification, std::string combine_text,
                                                 std::string combine_name);

// Mutants of the combine, verified after the split kernel as generated.
std::unique_ptr<MutantCheck> decode_combine_check(const TpuDecodeVerification& verification, std::string kernel_text,
                                                  std::string kernel_name);

// What a decode verification's numbers say, in words, for a mutant's outcome.
std::string decode_errors_text(const TpuDecodeVerifyResult& result);

}  // namespace kgen
