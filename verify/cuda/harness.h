// Runs one generated sm90a kernel on a GPU against the float64 reference
// (docs/spec-format.md §3): random inputs (kgen::verification_inputs), outputs poisoned
// with NaN and fenced by guard bands that must stay untouched, every (batch, kv head)
// slice compared with kgen::dense_attention under kgen::tolerance_for(dtype); optionally
// timed. Needs a Hopper GPU; builds anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

#include "spec.h"

namespace kgen::sm90a {

// Device buffers in the layouts of the generated launcher header (contiguous).
struct DeviceTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;
  const int32_t* q_segment_ids = nullptr;
  const int32_t* kv_segment_ids = nullptr;
  const float* sinks = nullptr;
  int32_t* document_tiles = nullptr;  // the document pre-pass's workspace (segment ids only)
};

// What the document pre-pass's workspace holds before a run: no list count or entry can be it.
inline constexpr int32_t kDocumentTilesPoison = -0x5a5a5a5b;

// Enqueues the kernel; returns "" or the launcher's error message.
using Launch = std::function<std::string(const DeviceTensors&, cudaStream_t)>;

struct HarnessOptions {
  uint64_t seed = 1;
  int64_t max_slices = -1;   // check only the first slices (-1: all of them)
  // > 0: a sampled run of a persistent kernel, whose work items are q blocks of this many rows:
  // only the blocks the kernel touched are compared (each whole: a block with some element of
  // out left at the poison fails), and the receipt counts them (check.blocks_checked) for the
  // caller to hold against the work items its sample owns (verify/cuda/emulate.py).
  int64_t touched_blocks_rows = 0;
  int threads = 0;           // reference threads (0: all hardware threads)
  int bench_iterations = 0;  // > 0: also time the kernel (median of this many runs)
  // > 0: segment ids pack documents of this many tokens (i / length, queries and keys
  // alike) instead of random runs; the benchmarks' layout (bench/).
  int64_t document_length = 0;
  // Non-empty: also write the run's receipt there as JSON (the gpu check of
  // docs/receipts/<name>.sm90a.json): the device, driver and runtime, `command`, the slices checked, the worst errors and
  // tolerances, the guard bands, pass or fail, and the timing when benched.
  std::string receipt_path;
  std::string command;
  std::string target = "sm90a";  // the kernel's target (sm90a or sm100a): names its symbol
  // The launcher header's kDocumentTilesInts: the document pre-pass's workspace the harness
  // allocates (0: no pre-pass), which must be the size of the host's layout of the lists.
  int64_t document_tiles_ints = 0;
};

// Prints a report; returns 0 when every check passes, 1 otherwise.
int run_harness(const Spec& spec, const Launch& launch, const HarnessOptions& options);

}  // namespace kgen::sm90a
