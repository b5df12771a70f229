// Runs hand-written PTX on the emulator for the core's tests: one module per test, the
// kernel's findings as the EmulationError text.
#pragma once

#include <string>
#include <vector>

#include "core/device.h"

namespace kgen::emu::testing {

// Loads `ptx` (a whole module; `origin` must be unique per test) and launches `kernel`.
// Returns "" or the report.
inline std::string run_ptx(const std::string& ptx, const std::string& origin, const std::string& kernel, Dim3 grid,
                           Dim3 block, std::vector<void*> args, uint32_t dynamic_shared = 0) {
  try {
    Device::get().load_ptx(ptx, origin);
    Device::get().launch(kernel, grid, block, dynamic_shared, args.data());
    return "";
  } catch (const EmulationError& e) {
    return e.what();
  }
}

inline const char* kHeader = ".version 9.0\n.target sm_90a\n.address_size 64\n";

}  // namespace kgen::emu::testing
