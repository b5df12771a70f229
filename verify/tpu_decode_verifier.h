// Verifies a generated tpu decode kernel (and its combine, when split) on the CPU: both modules
// run from their own MLIR through verify/mosaic's executor, with kv_lens and the page table as
// scalar prefetch, over every length of decode_length_cases (the sequences of one run carry
// different lengths), against dense_decode (docs/spec-format.md §8, docs/decode.md "Checking").
// Beyond the numbers it checks what the kernel must skip and when it copies: its DMAs from k and
// from v are no more than one per page (or block) of the sequences' live ranges, so a block
// wholly past kv_lens[b] (or left of the window) is never read, and every grid step starts the
// copies the double-buffered schedule says it does (a kernel that stopped prefetching would
// compute the same numbers, slower). A split kernel's combine is also run alone on partials built to stress it (parts
// and rows with nothing kept, lse values past exp's f32 range).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare.h"
#include "mosaic_kernel.h"
#include "spec.h"
#include "tpu_verifier.h"

namespace kgen {

struct TpuDecodeVerifyResult {
  Comparison comparison;  // the worst over every length case
  Tolerance tolerance;
  std::optional<Comparison> combine;  // the combine alone, for a split kernel
  std::string sample;                 // what ran, in words
  std::vector<int32_t> lengths;       // the kv_lens cases covered
  int64_t runs = 0;
  int64_t steps_run = 0;
  int64_t steps_skipped = 0;  // outside the sample
  // DMAs from k (or v, whichever read more) against what the live ranges allow.
  int64_t kv_copies = 0;
  int64_t kv_copies_allowed = 0;
  // The first grid step whose DMA starts differ from the schedule docs/decode.md describes (each
  // program copies its live blocks, the next one while computing on the current; on one
  // TensorCore the next program's first block during its own last), in words; empty when none.
  std::string schedule_mismatch;
  double compile_seconds = 0;
  double run_seconds = 0;

  bool copies_within() const { return kv_copies <= kv_copies_allowed; }
  bool passed() const {
    return comparison.within(tolerance) && copies_within() && schedule_mismatch.empty() &&
           (!combine || combine->within(tolerance));
  }
};

// The inputs, reference and sample of a decode verification, computed once so that many
// variants of either module (the mutants of verify/mutation_score.h) are checked against them.
class TpuDecodeVerification {
 public:
  TpuDecodeVerification(const Spec& spec, const TpuVerifyOptions& options);
  ~TpuDecodeVerification();
  TpuDecodeVerification(TpuDecodeVerification&&) noexcept;

  // How many splits the kernel has (the spec's, or the tpu target's choice): with more than
  // one, a combine module is required.
  int64_t splits() const;

  mosaic::MosaicKernel compile(const std::string& module_text, const std::string& module_name) const;
  // `combine` is null for an unsplit kernel. Throws std::runtime_error when a kernel misbehaves
  // at run time (an index map leaving its array).
  TpuDecodeVerifyResult run(const mosaic::MosaicKernel& kernel, const mosaic::MosaicKernel* combine) const;
  // Both halves; `combine_text` empty for an unsplit kernel.
  TpuDecodeVerifyResult check(const std::string& kernel_text, const std::string& kernel_name,
                              const std::string& combine_text, const std::string& combine_name) const;

 private:
  struct Data;
  std::unique_ptr<Data> data_;
};

}  // namespace kgen
