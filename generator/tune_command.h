// `kgen tune SPEC --target T [--pass P] [--budget N] [--jobs N] [--measure CMD] [--tables DIR]
// [--no-write] [--list]` (docs/tuning.md): every legal tiling of one pass measured, ranked and
// written into the target's tuning table; `kgen tune --auto SPEC...` (make tune) the same for
// each pass whose tiles a spec writes "auto".
#pragma once

#include <string>

namespace kgen {

// argv[1] is "tune". `root`: the project root unless --root says otherwise; `self`: this kgen
// binary, which the measurers call for block plans. Exit status as every kgen command's.
int run_tune_command(int argc, char** argv, const std::string& root, const std::string& self);

}  // namespace kgen
