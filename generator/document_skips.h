// Tiles skipped across documents (docs/block-plan.md, "Tiles skipped across documents"): a
// kernel with segment ids reduces each block's ids to their (minimum, maximum) at run time, and
// a step the static block plan keeps is dead when the two blocks' ranges cannot meet, or lies
// inside one document when both blocks hold one id, the same. The rule, document_step, is
// runtime/cuda/document_step.h, which the CUDA kernels' pre-pass compiles too; here `kgen
// explain --document-lengths` and the tests classify steps with it, and the tpu forward's
// callers on the CPU (verify/tpu_arrays.h) build its range operands with block_ranges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../runtime/cuda/document_step.h"  // IdRange, DocumentStep, document_step: the rule
#include "block_plan.h"
#include "spec.h"

namespace kgen {

// One batch row's ids cut in blocks of `block` positions, each reduced to its range; a partial
// last block reduces over the positions that exist.
std::vector<IdRange> block_ranges(const int32_t* ids, int64_t length, int64_t block);

// The segment ids of documents of `lengths` packed in order and repeated until `length`
// positions are filled (the last document cut there); document n has id n.
std::vector<int32_t> packed_document_ids(const std::vector<int64_t>& lengths, int64_t length);

// The static plan's kept steps (the non-empty tiles of every head's mask, for one batch row)
// as document_step classifies them. A kernel that compares ids on every partial tile (the CUDA
// forwards: docs/block-plan.md) counts a partial tile inside one document as comparing.
enum class PartialTilesInOneDocument { kSkipTheComparison, kCompare };
struct DocumentStepCounts {
  int64_t planned = 0;
  int64_t dead = 0;
  int64_t one_document = 0;
  int64_t compared() const { return planned - dead - one_document; }
};
DocumentStepCounts count_document_steps(
    const HeadMasks& masks, int64_t heads, const TileShape& tiles, const std::vector<int32_t>& q_ids,
    const std::vector<int32_t>& kv_ids,
    PartialTilesInOneDocument partial = PartialTilesInOneDocument::kSkipTheComparison);

// "L1,L2,..." (positive integers) as lengths; SpecError naming --document-lengths otherwise.
std::vector<int64_t> parse_document_lengths(const std::string& text);

// `kgen explain SPEC --document-lengths L1,L2,...`: for documents of those lengths packed in
// order on the q and the kv side, per target the spec names, at its own block sizes, the static
// plan's steps, the dead ones and those inside one document. SpecError for a spec without
// segment ids or a decode spec.
std::string explain_document_lengths(const Spec& spec, const std::vector<int64_t>& lengths);

}  // namespace kgen
