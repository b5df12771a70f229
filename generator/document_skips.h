// Tiles skipped across documents (docs/block-plan.md, "Tiles skipped across documents"): a
// kernel with segment ids reduces each block's ids to their (minimum, maximum) at run time, and
// a step the static block plan keeps is dead when the two blocks' ranges cannot meet, or lies
// inside one document when both blocks hold one id, the same. The rule is written here once;
// `kgen explain --document-lengths` and the tests classify steps with document_step, and the
// tpu forward's callers on the CPU (verify/tpu_arrays.h) build its range operands with
// block_ranges (the sm90a and sm100a kernels do not apply it yet: docs/block-plan.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "spec.h"

namespace kgen {

// The smallest and largest segment id of one block of positions.
struct IdRange {
  int32_t min = 0;
  int32_t max = 0;
};

// One batch row's ids cut in blocks of `block` positions, each reduced to its range; a partial
// last block reduces over the positions that exist.
std::vector<IdRange> block_ranges(const int32_t* ids, int64_t length, int64_t block);

// What a kept step does at run time. kDead: the ranges cannot meet (q.max < kv.min or kv.max
// < q.min), so no q id equals a kv id and the step computes nothing. kOneDocument: both blocks
// hold the one id (q.min == q.max == kv.min == kv.max), so the comparison would keep every pair
// and the step skips it. kCompare: every other step compares ids.
enum class DocumentStep { kDead, kOneDocument, kCompare };
DocumentStep document_step(IdRange q, IdRange kv);

// The segment ids of documents of `lengths` packed in order and repeated until `length`
// positions are filled (the last document cut there); document n has id n.
std::vector<int32_t> packed_document_ids(const std::vector<int64_t>& lengths, int64_t length);

// The static plan's kept steps (the non-empty tiles of every head's mask, for one batch row)
// as document_step classifies them.
struct DocumentStepCounts {
  int64_t planned = 0;
  int64_t dead = 0;
  int64_t one_document = 0;
  int64_t compared() const { return planned - dead - one_document; }
};
DocumentStepCounts count_document_steps(const HeadMasks& masks, int64_t heads, const TileShape& tiles,
                                        const std::vector<int32_t>& q_ids, const std::vector<int32_t>& kv_ids);

// "L1,L2,..." (positive integers) as lengths; SpecError naming --document-lengths otherwise.
std::vector<int64_t> parse_document_lengths(const std::string& text);

// `kgen explain SPEC --document-lengths L1,L2,...`: for documents of those lengths packed in
// order on the q and the kv side, per target the spec names, at its own block sizes, the static
// plan's steps, the dead ones and those inside one document. SpecError for a spec without
// segment ids or a decode spec.
std::string explain_document_lengths(const Spec& spec, const std::vector<int64_t>& lengths);

}  // namespace kgen
