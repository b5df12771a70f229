// A predicate mask (docs/spec-format.md, "Masks") lowered once for every target: a small
// program of comparisons of the query position i and the key position j, which each target
// prints in its own language (mask_printers.h). Explicit leaves have no predicate; the mask
// table of the block plan carries them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mask.h"

namespace kgen {

// Every constant of a program lies in [-kMaskConstantLimit, kMaskConstantLimit]. Positions
// are below 2^21 (docs/spec-format.md, `shape`), so a constant beyond the limit compares
// exactly as the limit does, and i + c stays within 2^30 + 2^21 < 2^31: kernels compute in
// int32 with no overflow. The spec allows constants up to 2^32 in magnitude.
constexpr int64_t kMaskConstantLimit = int64_t{1} << 30;

struct MaskNode {
  enum class Op {
    kTrue,        // every (i, j)
    kKeyAtMost,   // j <= i + c
    kKeyAtLeast,  // j >= i + c
    kKeyBelow,    // j < c
    kSameChunk,   // i / c == j / c, c >= 1 (positions are non-negative: truncation is floor)
    kAnd,         // every operand
    kOr,          // some operand
  };
  Op op = Op::kTrue;
  int64_t c = 0;
  std::vector<int> operands;  // kAnd, kOr: two or more earlier nodes
};

// Nodes in evaluation order: operands before their users, the result last. Every node but
// the last is used exactly once, and kTrue appears only as a whole program.
struct MaskProgram {
  std::vector<MaskNode> nodes;

  bool evaluate(int64_t i, int64_t j) const;
};

// `mask` must be a predicate (Mask::is_predicate). With `kv_len`, the program also requires
// j < kv_len, for a kernel whose last key block runs past the keys.
MaskProgram lower_mask(const Mask& mask, std::optional<int64_t> kv_len = std::nullopt);

}  // namespace kgen
