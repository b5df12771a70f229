// Runs one generated sm90a backward on a GPU against the float64 gradients of
// docs/spec-format.md §7 (verify/dense_backward.h): the spec's forward kernel first, whose
// out and lse are the residuals; then the backward with a random dout, its outputs poisoned
// with NaN and fenced by guard bands; dq, dk, dv (and dsinks) compared on sampled rows with
// kgen::backward_tolerance(dtype). Needs a Hopper GPU; builds anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

#include "harness.h"
#include "spec.h"

namespace kgen::sm90a {

// Device buffers in the layouts of the generated backward launcher header (contiguous).
struct BackwardTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* out = nullptr;
  const float* lse = nullptr;
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  void* workspace = nullptr;
  const int32_t* q_segment_ids = nullptr;
  const int32_t* kv_segment_ids = nullptr;
  const float* sinks = nullptr;
  float* dsinks = nullptr;
};

// Enqueues the backward; returns "" or the launcher's error message.
using BackwardLaunch = std::function<std::string(const BackwardTensors&, cudaStream_t)>;

struct BackwardHarnessOptions {
  uint64_t seed = 1;
  // Every `row_stride`-th row of dq, dk and dv is compared (and the last block's rows), over
  // the first and the last (batch, kv head) group; 1: every row of every group.
  int64_t row_stride = 7;
  // Only the first (batch, kv head) group, and dsinks of its heads: what a run of a sample of
  // CTAs produces completely (verify/cuda/emulate.py).
  bool first_group_only = false;
  int bench_iterations = 0;  // > 0: also time the backward (median of this many runs)
  std::string receipt_path;  // non-empty: the run's facts as JSON
  std::string command;
};

// Prints a report; returns 0 when every check passes, 1 otherwise.
// `document_tiles_ints`: the forward launcher's kDocumentTilesInts (its document pre-pass's
// workspace, which the forward's own harness checks).
int run_backward_harness(const Spec& spec, const Launch& forward, const BackwardLaunch& backward,
                         std::size_t workspace_bytes, int64_t document_tiles_ints,
                         const BackwardHarnessOptions& options);

}  // namespace kgen::sm90a
