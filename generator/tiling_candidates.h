// The tilings kgen tune measures and the default rule picks from (docs/tuning.md): every
// combination of a target's tuning axes that its own checks (Target::check_tiling,
// check_backward_tiling, the same kgen gen applies) accept, nearest the preferred tiling first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec.h"
#include "targets/target.h"

namespace kgen {

// lo, 2 lo, 4 lo, ... up to hi (nothing when hi < lo).
std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi);

// The combinations of `space`'s axes that agree with `fixed` (fields written as numbers), less
// those it skips, in the default rule's order: nearest `space.preferred` first (the sum over
// fields of |log2 value - log2 preferred|), ties to the larger tiles, then to the larger values
// in field order. Not yet checked for legality.
std::vector<TileChoice> tiling_combinations(const TuningSpace& space, const TileChoice& fixed);

// kgen gen's verdict on `spec` with `tiles` written into pass `pass`: check_tiling for the
// forward and decode tiles, check_backward_tiling for the backward's; a decode tiling the
// target generates no kernel for (Target::decode_unsupported) is refused too.
std::optional<TilingViolation> check_pass_tiles(const Spec& spec, const Target& target, TilePass pass,
                                                const TileChoice& tiles);

// `spec` with `tiles` written into pass `pass` of `target`.
Spec with_tiles(const Spec& spec, const Target& target, TilePass pass, const TileChoice& tiles);

struct Candidates {
  std::vector<TileChoice> legal;  // in the default rule's order
  int64_t combinations = 0;       // before the legality checks
  std::optional<TilingViolation> first_refusal;  // of the nearest refused combination
};

// Every legal combination (stop_at_first: the first only, which is the default rule's choice).
Candidates legal_tilings(const Spec& spec, const Target& target, TilePass pass, const TuningSpace& space,
                         const TileChoice& fixed, bool stop_at_first = false);

// What a tuning entry records to notice that the search changed since it was measured: the
// sha256 of the legal tilings, in order.
std::string candidates_digest(const std::vector<TileChoice>& legal);

}  // namespace kgen
