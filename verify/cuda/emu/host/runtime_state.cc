#include "runtime_state.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kgen::emu {
namespace {

thread_local cudaError_t last_error = cudaSuccess;
std::atomic<cudaError_t> sticky{cudaSuccess};

bool continue_after_findings() {
  const char* value = std::getenv("KGEN_EMU_CONTINUE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace

cudaError_t note_error(cudaError_t error) {
  if (error != cudaSuccess) last_error = error;
  return error;
}

cudaError_t refuse(std::string_view api, cudaError_t error, std::string_view why) {
  std::string line = "ptxemu: " + std::string(api) + ": " + std::string(why) + "\n";
  std::fputs(line.c_str(), stderr);
  return note_error(error);
}

cudaError_t peek_last_error() {
  cudaError_t stuck = sticky.load();
  return stuck != cudaSuccess ? stuck : last_error;
}

cudaError_t take_last_error() {
  cudaError_t error = peek_last_error();
  last_error = cudaSuccess;
  return error;
}

cudaError_t sticky_error() { return sticky.load(); }

cudaError_t report_finding(std::string_view report) {
  std::string text = "ptxemu: " + std::string(report);
  if (text.empty() || text.back() != '\n') text += '\n';
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  sticky.store(cudaErrorLaunchFailure);
  if (!continue_after_findings()) {
    std::fputs("ptxemu: exiting with status 1 (set KGEN_EMU_CONTINUE=1 to return cudaErrorLaunchFailure instead)\n",
               stderr);
    // _Exit, not exit: the emulator may have worker threads and locks in any state after a
    // finding, and static destructors must not run into them. Flush what the program printed.
    std::fflush(nullptr);
    std::_Exit(1);
  }
  return note_error(cudaErrorLaunchFailure);
}

void reset_runtime_errors_for_testing() {
  last_error = cudaSuccess;
  sticky.store(cudaSuccess);
}

}  // namespace kgen::emu
