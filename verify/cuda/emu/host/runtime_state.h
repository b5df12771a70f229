// The process-wide state of the CUDA runtime stand-in that is not about memory or kernels:
// the last error of each thread, the sticky error of the (one) context, and how a finding of
// the emulator is reported.
//
// CUDA's rules, kept here: every runtime call that fails leaves its error as the calling
// thread's last error (cudaGetLastError returns and clears it, cudaPeekAtLastError only
// returns it). A failed kernel corrupts the context: the error becomes sticky, every later
// call that needs the context returns it, and cudaGetLastError cannot clear it.
#pragma once

#include <driver_types.h>

#include <string_view>

namespace kgen::emu {

// Records `error` as the thread's last error when it is not cudaSuccess; returns it, so that
// API functions end with `return note_error(...)`.
cudaError_t note_error(cudaError_t error);

// Prints "ptxemu: <api>: <why>" on stderr and records `error`: for the calls that refuse a
// request a real GPU would accept or that the emulator does not implement.
cudaError_t refuse(std::string_view api, cudaError_t error, std::string_view why);

// The thread's last error, or the sticky error when there is one.
cudaError_t peek_last_error();
// As peek_last_error, then clears the thread's (non-sticky) last error.
cudaError_t take_last_error();

// The sticky error (cudaSuccess when the context is healthy).
cudaError_t sticky_error();

// Reports what the emulator found while running a kernel: prints "ptxemu: <report>" on
// stderr, makes cudaErrorLaunchFailure sticky and, unless KGEN_EMU_CONTINUE=1, exits the
// process with status 1 so that no program can ignore a finding.
cudaError_t report_finding(std::string_view report);

// For tests: forgets the last and sticky errors.
void reset_runtime_errors_for_testing();

}  // namespace kgen::emu
