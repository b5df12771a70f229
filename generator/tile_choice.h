// A tiling as `kgen tune` and "auto" tile fields see it (docs/tuning.md): the values of one
// pass's tile fields, by their names in the target section ("block_q", "backward.block_kv",
// "splits"), and how a spec's "auto" fields were filled in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kgen {

// Ordered by field name, so that a choice prints, hashes and compares the same way everywhere.
using TileChoice = std::map<std::string, int64_t>;

// Which tiling of a spec: the forward's ("targets.<t>.block_q", ...), the backward kernels'
// ("targets.<t>.backward.*"), a decode kernel's ("targets.<t>.block_kv", "splits").
enum class TilePass { kForward, kBackward, kDecode };
const char* tile_pass_name(TilePass pass);  // "forward", "backward", "decode"

// "block_kv 1024, block_kv_compute 512, block_q 512"
std::string describe_tiles(const TileChoice& choice);
// "1024/512/512": the values in field order, for tables whose header names the fields.
std::string compact_tiles(const TileChoice& choice);
// "block_kv/block_kv_compute/block_q"
std::string compact_fields(const TileChoice& choice);

// How the "auto" fields of one (target, pass) were filled in, for `kgen explain` and for
// `kgen gen --check` (make check-generated), which fails when `problem` is set.
struct TileResolution {
  std::string target;
  TilePass pass = TilePass::kForward;
  std::vector<std::string> auto_fields;  // as written under "targets.<t>": "block_q", "backward.block_kv"
  TileChoice chosen;                     // the pass's whole tiling as used
  bool tuned = false;                    // from the tuning table; else by the default rule
  std::string table;                     // "tuning/tpu/v5e.json"
  std::string key;                       // the spec's entry key in it
  std::string why;                       // one line: which candidate, its cost, or the rule
  std::optional<std::string> problem;    // no entry, or a stale one, and the fix
};

}  // namespace kgen
