// The exit status every kgen command shares (docs/spec-format.md §6): 0 success, 2 a bad spec or
// bad arguments, 1 any other failure. Errors go to stderr, prefixed with `command`.
#pragma once

#include <exception>
#include <iostream>

#include "diagnostics.h"

namespace kgen {

template <typename Run>
int exit_status_of(const char* command, Run run) {
  try {
    return run();
  } catch (const SpecError& error) {
    std::cerr << "kgen: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << command << ": " << error.what() << "\n";
    return 1;
  }
}

}  // namespace kgen
