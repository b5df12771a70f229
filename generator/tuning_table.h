// The tuning tables (docs/tuning.md): tuning/<target>/<device>.json, written by kgen tune and
// read by "auto" tile fields. One entry per spec shape, keyed by a hash of the spec's
// shape-defining fields; per pass, the measured tilings ranked by cost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "spec.h"
#include "tile_choice.h"

namespace kgen {

// What a tuning entry is for: the spec's fields that decide its kernels' shape and work (kind,
// shape, dtype, mask and the explicit masks' bits, softcap, segment ids, sinks, lse, backward,
// decode pages); not its name, comment, scale or any target's tiles.
Json tuning_fields(const Spec& spec);
// The entry key: the first 16 hex digits of the sha256 of tuning_fields as compact JSON.
std::string tuning_key(const Json& fields);

struct MeasuredTiling {
  TileChoice tiles;
  double cost = 0;
  Json row;  // as written: cost, tiles, live tiles, memory, the measurer's columns
};

// One pass of one entry.
struct TuningEntry {
  std::vector<MeasuredTiling> measured;  // cheapest first
  int64_t legal_candidates = 0;
  std::string candidates_digest;  // candidates_digest (tiling_candidates.h) when measured
  std::string measured_by;
  std::string cost_unit;
};

class TuningTable {
 public:
  TuningTable() = default;
  // <tuning_dir>/<target>/<device>.json; an absent file is an empty table. Every entry is
  // checked when read: SpecError naming the file, the JSON path, the value and what was
  // expected for a malformed one.
  static TuningTable read(const std::string& tuning_dir, const std::string& target, const std::string& device);

  // "tuning/<target>/<device>.json", as messages and explain name it.
  const std::string& shown_path() const { return shown_; }
  std::optional<TuningEntry> entry(const std::string& key, TilePass pass) const;

  // Sets the entry of `key` for `pass` (its "fields" and the spec it was tuned from too).
  void put(const std::string& key, const Json& fields, const std::string& spec_source, TilePass pass, Json pass_entry);
  // The table as its file holds it: deterministic, one measured row per line.
  std::string text() const;
  void write() const;

 private:
  std::string file_, shown_, target_, device_;
  Json document_;
  std::map<std::pair<std::string, std::string>, TuningEntry> entries_;  // (key, pass name)
};

// The checks `read` applies to one pass entry at JSON path `path` (for kgen tune, which checks
// what it is about to write the same way).
TuningEntry parse_tuning_entry(const Json& value, const std::string& path);

}  // namespace kgen
