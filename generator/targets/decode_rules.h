// What every target shares for a decode spec (docs/spec-format.md §8, docs/decode.md): its
// section's fields (block_kv, splits; no block_q), the rules every decode tiling obeys, the
// size of its q tile and kv walk, and how `kgen explain` and `kgen plan` show the split.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "decode_splits.h"
#include "json_fields.h"
#include "spec.h"
#include "targets/tiling_rules.h"

namespace kgen {

// Reads "splits" of a target section: for a decode spec an optional count, for a forward spec
// refused. For a decode spec also refuses "block_q" and "backward", which it cannot have.
std::optional<int64_t> parse_decode_splits(JsonFields& target_fields, const Spec& spec);

// block_kv divides kv_len; block_kv and page_size nest (one is a multiple of the other);
// splits is at most the kv blocks a sequence can read.
void add_decode_rules(const Spec& spec, int64_t block_kv, std::optional<int64_t> splits, TilingRules& rules);

// The rows of a decode kernel's q tile: the q heads of one kv head's group times the new tokens.
int64_t decode_rows(const Spec& spec);

// The most kv blocks of block_kv positions one sequence's new tokens can attend: the whole
// cache when causal, the window's blocks (plus one it straddles) when local.
int64_t decode_kv_blocks(const Spec& spec, int64_t block_kv);

// `kgen explain`'s lines for a decode kernel of `target`.
void explain_decode(std::ostream& out, const Spec& spec, int64_t block_kv, const DecodeWork& work,
                    const DecodeSplits& splits, const char* units);

// `kgen plan`'s JSON for a decode kernel: tiles, the split, the grid of (batch, kv head, split).
Json decode_plan_json(const Spec& spec, const char* target, int64_t block_kv, const DecodeWork& work,
                      const DecodeSplits& splits);

}  // namespace kgen
