// The rule of tiles skipped across documents (docs/block-plan.md, "Tiles skipped across
// documents"), written once for the generator (generator/document_skips.h: `kgen explain
// --document-lengths`, the verifiers' counts) and the CUDA kernels' pre-pass
// (cuda/document_tiles.cuh). A block's segment ids reduce to their (minimum, maximum); a step
// of a q block against a kv block is dead when the two ranges cannot meet, and lies inside one
// document when both blocks hold the one id. Plain C++: the generator includes it too.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KGEN_HOST_DEVICE __host__ __device__
#else
#define KGEN_HOST_DEVICE
#endif

namespace kgen {

// The smallest and largest segment id of one block of positions. Trivial (no member
// initializers), so that the pre-pass can keep one in __shared__ memory.
struct IdRange {
  int32_t min;
  int32_t max;
};

// What a kept step does at run time. kDead: the ranges cannot meet (q.max < kv.min or kv.max
// < q.min), so no q id equals a kv id and the step computes nothing. kOneDocument: both blocks
// hold the one id (q.min == q.max == kv.min == kv.max), so the comparison would keep every pair
// and the step skips it. kCompare: every other step compares ids.
enum class DocumentStep : int8_t { kDead, kOneDocument, kCompare };

KGEN_HOST_DEVICE constexpr DocumentStep document_step(IdRange q, IdRange kv) {
  if (q.max < kv.min || kv.max < q.min) return DocumentStep::kDead;
  if (q.min == q.max && kv.min == kv.max && q.min == kv.min) return DocumentStep::kOneDocument;
  return DocumentStep::kCompare;
}

}  // namespace kgen
