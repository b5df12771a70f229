// Runs one generated CUDA decode kernel (and its combine) against the float64 reference
// (docs/decode.md, "Checking decode kernels"): over every kv_lens case of
// decode_length_cases (the sequences of one run carry different lengths), on
// decode_verification_inputs with every value row past kv_lens[b] NaN, page tables permuted;
// outputs poisoned with NaN and fenced by guard bands; every row of every (batch, kv head)
// compared with dense_decode. A split kernel's combine also runs alone on partials built to
// stress it (splits and rows with nothing kept, lse past exp's f32 range) against
// dense_combine. Built for ptxemu (sm90a_emu_decode_run_<name>); it would run on a GPU alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

#include "spec.h"

namespace kgen::sm90a {

// The numbers of the kernel under test, from its launcher header.
struct DecodeKernelFacts {
  int64_t rows = 0;  // q tile rows per (batch, kv head)
  int64_t splits = 1;
  int64_t block_kv = 0;
};

// Device buffers in the launcher header's layouts.
struct DecodeDeviceTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const int32_t* kv_lens = nullptr;
  const int32_t* page_table = nullptr;
  const float* sinks = nullptr;
  void* out = nullptr;
  float* lse = nullptr;
  float* out_s = nullptr;
  float* lse_s = nullptr;
};

// Enqueues the kernel (and its combine), or with `combine_only` the combine alone; returns ""
// or the launcher's error message.
using DecodeLaunch = std::function<std::string(const DecodeDeviceTensors&, cudaStream_t, bool combine_only)>;

struct DecodeHarnessOptions {
  uint64_t seed = 1;
  // > 0: compare only the rows of the first this many kv heads of every sequence (the CTAs
  // the emulator ran, verify/cuda/emulate.py's sample); the other rows are left at the
  // poison and not read. -1: every row.
  int64_t kv_heads = -1;
  // Non-empty: also write the facts of the run there as JSON (the cpu_emulation check of the
  // kernel's receipt, docs/receipts.md): what was checked, the worst errors and tolerances,
  // the guard bands, pass or fail.
  std::string receipt_path;
  std::string command;
};

// Prints a report whose last lines are "worst out error X (tolerance T), worst lse error Y
// (tolerance U)" (over every run and the combine alone) and PASS or FAIL; returns 0 when every
// check passes, 1 otherwise.
int run_decode_harness(const Spec& spec, const DecodeKernelFacts& facts, const DecodeLaunch& launch,
                       const DecodeHarnessOptions& options);

}  // namespace kgen::sm90a
