// `kgen explain`: a reviewer's summary of a spec and what each target will do with it.
#pragma once

#include <ostream>
#include <string>

#include "block_plan.h"
#include "memory_budget.h"
#include "receipts.h"
#include "spec.h"

namespace kgen {

std::string explain_spec(const Spec& spec);

// Each kernel's receipt status (docs/receipts.md): current with the checks it holds, or
// stale, incomplete, missing, invalid and why.
std::string explain_receipts(const Spec& spec, const ReceiptPaths& paths);

// One character per tile: '.' empty, '+' partial, '#' full; one line per q block. Maps
// wider than `max_columns` are drawn with each character covering several tiles (empty
// or full only when all of them are).
std::string draw_block_map(const std::vector<int8_t>& classes, int64_t q_blocks, int64_t kv_blocks,
                           int64_t max_columns);

// Pieces of a target's section of `kgen explain` (Target::explain).
std::string fraction_skipped(int64_t live, int64_t total);  // "87.5%"
// "partial tiles masked by the in-kernel predicate", "no partial tiles", ...
std::string describe_partial_tiles(PartialTileMask mask);
void explain_budget(std::ostream& out, const char* what, const MemoryBudget& budget, int64_t limit);
// The block map of every distinct head mask at `tiles`.
void explain_maps(std::ostream& out, const Spec& spec, const TileShape& tiles);

}  // namespace kgen
