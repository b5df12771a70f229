// "auto" tile fields (docs/tuning.md): each target's "auto" fields of a spec filled in from
// the tuning table's entry for the spec's shape, or by the default rule when it has none.
#pragma once

#include <string>
#include <vector>

#include "spec.h"

namespace kgen {

// Fills in every field of spec.auto_tiles and records how in spec.tile_resolutions: per
// target and pass, the best measured tiling of the entry for the spec in
// <tuning_dir>/<target>/<device>.json that agrees with the fields written as numbers, else the
// legal candidate nearest the target's preferred tiling. SpecError (exit 2) for a malformed
// table, or when no candidate is legal ("auto" with no table and no rule).
void resolve_auto_tiles(Spec& spec, const std::string& tuning_dir);

// `kgen explain`'s lines on the "auto" fields: what each pass took, from where and why.
std::string explain_auto_tiles(const Spec& spec);

// One line per "auto" pass whose entry is missing or stale (kgen gen --check fails on them),
// naming the command that re-tunes it.
std::vector<std::string> auto_tile_problems(const Spec& spec);

}  // namespace kgen
