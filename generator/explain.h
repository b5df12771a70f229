// `kgen explain`: a reviewer's summary of a spec and what each target will do with it.
#pragma once

#include <string>

#include "receipts.h"
#include "spec.h"

namespace kgen {

std::string explain_spec(const Spec& spec);

// Each kernel's receipt status (docs/receipts.md): current with the checks it holds, or
// stale, incomplete, missing, invalid and why; placeholder targets have none.
std::string explain_receipts(const Spec& spec, const ReceiptPaths& paths);

// One character per tile: '.' empty, '+' partial, '#' full; one line per q block. Maps
// wider than `max_columns` are drawn with each character covering several tiles (empty
// or full only when all of them are).
std::string draw_block_map(const std::vector<int8_t>& classes, int64_t q_blocks, int64_t kv_blocks,
                           int64_t max_columns);

}  // namespace kgen
