// Systematic mutants of a Mosaic kernel: small, plausible edits of its MLIR that a
// verification worth trusting must notice. verify/mutation_score.h runs them.
//
// The edits, one mutant each (docs/verification.md lists them with their rationale):
//   arith/math ops swapped for a neighbour: addf<->subf, mulf<->divf, maximumf<->minimumf,
//     addi<->subi, muli<->divsi, maxsi<->minsi, andi<->ori, exp<->exp2, log<->log2,
//     tanh->sin;
//   arith.select with its two values exchanged;
//   comparison predicates shifted: sge<->sgt, sle<->slt, eq<->ne (and the unsigned and
//     float orderings alike);
//   integer constants (scalars and splats, index included) +1 and -1; booleans flipped;
//   every value an index map (@transform_*) returns, +1 and -1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::mosaic {

struct Mutant {
  int64_t op_ordinal = 0;  // the op's place in a pre-order walk of the module
  int variant = 0;         // which of that op's mutants
  int line = 0;            // of the op in the original text
  std::string edit;        // e.g. "arith.addf -> arith.subf", "constant 0 -> 1"
};

// Every mutant of the module, in walk order. Throws MosaicError when it does not parse.
std::vector<Mutant> enumerate_mutants(std::string_view module_text, const std::string& source_name);

// The module with `mutant` applied, printed in MLIR's generic form (which any mutant,
// valid or not, round-trips through). Throws MosaicError when the mutant does not exist.
std::string apply_mutant(std::string_view module_text, const std::string& source_name, const Mutant& mutant);

}  // namespace kgen::mosaic
