#include "auto_tiles.h"

#include <cstdio>

#include "diagnostics.h"
#include "targets/target.h"
#include "tiling_candidates.h"
#include "tuning_table.h"

namespace kgen {
namespace {

bool agrees(const TileChoice& tiles, const TileChoice& fixed) {
  for (const auto& [field, value] : fixed) {
    const auto found = tiles.find(field);
    if (found == tiles.end() || found->second != value) return false;
  }
  return true;
}

std::string cost_text(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, cost >= 100 ? "%.0f" : "%.4g", cost);
  return buffer;
}

// The best measured tiling of `entry` that agrees with `fixed` and is legal now; its rank (1-based).
std::optional<std::pair<TileChoice, std::size_t>> best_measured(const TuningEntry& entry, const Spec& spec,
                                                                const Target& target, TilePass pass,
                                                                const TileChoice& fixed) {
  for (std::size_t k = 0; k < entry.measured.size(); ++k) {
    const TileChoice& tiles = entry.measured[k].tiles;
    if (agrees(tiles, fixed) && !check_pass_tiles(spec, target, pass, tiles)) return std::make_pair(tiles, k + 1);
  }
  return std::nullopt;
}

void resolve_pass(Spec& spec, const Target& target, TilePass pass, const std::vector<std::string>& fields,
                  const std::string& tuning_dir) {
  const std::string name = target.name();
  const std::string first_path = "targets." + name + "." + fields.front();
  const std::optional<TuningSpace> space = target.tuning_space(spec, pass);
  if (!space)
    throw SpecError(first_path, "\"auto\"",
                    "a number: target " + name + " has no " + tile_pass_name(pass) + " tiles to tune for this spec");
  TileChoice fixed = target.tiles_of(spec, pass);
  for (const std::string& field : fields) {
    if (!fixed.count(field))
      throw SpecError("targets." + name + "." + field, "\"auto\"",
                      "a number: target " + name + " does not tune " + field + " (docs/tuning.md)");
    fixed.erase(field);
  }

  TileResolution resolution;
  resolution.target = name;
  resolution.pass = pass;
  resolution.auto_fields = fields;
  const Json key_fields = tuning_fields(spec);
  resolution.key = tuning_key(key_fields);
  const TuningTable table = tuning_dir.empty() ? TuningTable() : TuningTable::read(tuning_dir, name, target.tuning_device(spec));
  resolution.table = tuning_dir.empty() ? "(no tuning tables)" : table.shown_path();

  std::optional<TileChoice> chosen;
  if (const std::optional<TuningEntry> entry = table.entry(resolution.key, pass)) {
    const Candidates now = legal_tilings(spec, target, pass, *space, {});
    if (const auto best = best_measured(*entry, spec, target, pass, fixed)) {
      chosen = best->first;
      resolution.tuned = true;
      const MeasuredTiling& row = entry->measured[best->second - 1];
      resolution.why = "tuned: rank " + std::to_string(best->second) + " of " + std::to_string(entry->measured.size()) +
                       " measured (" + std::to_string(entry->legal_candidates) + " legal), " + cost_text(row.cost) +
                       " " + entry->cost_unit + ", by " + entry->measured_by;
      if (!fixed.empty()) resolution.why += "; the cheapest with " + describe_tiles(fixed);
    }
    if (candidates_digest(now.legal) != entry->candidates_digest)
      resolution.problem = "entry " + resolution.key + " of " + table.shown_path() + " is stale: the legal " +
                           tile_pass_name(pass) + " tilings changed since it was measured (" +
                           std::to_string(now.legal.size()) + " now, " + std::to_string(entry->legal_candidates) +
                           " then)";
    else if (!chosen)
      resolution.problem = "entry " + resolution.key + " of " + table.shown_path() + " measured no legal tiling with " +
                           describe_tiles(fixed);
  } else {
    resolution.problem = "no " + std::string(tile_pass_name(pass)) + " entry " + resolution.key + " in " + resolution.table;
  }

  if (!chosen) {
    const Candidates rule = legal_tilings(spec, target, pass, *space, fixed, /*stop_at_first=*/true);
    if (rule.legal.empty()) {
      std::string why = "a tuned entry for this spec in " + resolution.table + " (kgen tune SPEC --target " + name +
                        " --pass " + tile_pass_name(pass) + ") or a legal tiling for the default rule; none of its " +
                        std::to_string(rule.combinations) + " candidate tilings is";
      if (rule.first_refusal)
        why += " (the nearest: " + rule.first_refusal->path + ": found " + rule.first_refusal->found + ", expected " +
               rule.first_refusal->expected + ")";
      throw SpecError(first_path, "\"auto\"", why);
    }
    chosen = rule.legal.front();
    resolution.why = "the default rule: the legal tiling nearest " + describe_tiles(space->preferred) + " (" +
                     space->preferred_why + ")";
    if (!fixed.empty()) resolution.why += " with " + describe_tiles(fixed);
  }
  target.set_tiles(spec, pass, *chosen);
  resolution.chosen = *chosen;
  spec.tile_resolutions.push_back(std::move(resolution));
}

}  // namespace

void resolve_auto_tiles(Spec& spec, const std::string& tuning_dir) {
  for (const Target* target : targets()) {
    const auto found = spec.auto_tiles.find(target->name());
    if (found == spec.auto_tiles.end() || !target->named_by(spec)) continue;
    const TilePass first = spec.decode ? TilePass::kDecode : TilePass::kForward;
    for (TilePass pass : {first, TilePass::kBackward}) {
      std::vector<std::string> fields;
      for (const std::string& field : found->second)
        if ((field.rfind("backward.", 0) == 0) == (pass == TilePass::kBackward)) fields.push_back(field);
      if (!fields.empty()) resolve_pass(spec, *target, pass, fields, tuning_dir);
    }
  }
}

std::string explain_auto_tiles(const Spec& spec) {
  if (spec.tile_resolutions.empty()) return "";
  std::string out = "\n  tiles written \"auto\" (docs/tuning.md):\n";
  for (const TileResolution& r : spec.tile_resolutions) {
    std::string fields;
    for (const std::string& field : r.auto_fields) fields += (fields.empty() ? "" : ", ") + field;
    out += "    " + r.target + " " + tile_pass_name(r.pass) + " (" + fields + "): " + describe_tiles(r.chosen) + "\n";
    out += "      " + r.why + "\n";
    out += "      table " + r.table + ", entry " + r.key + "\n";
    if (r.problem) out += "      " + *r.problem + "; make tune SPEC=" + spec.source + " re-tunes it\n";
  }
  return out;
}

std::vector<std::string> auto_tile_problems(const Spec& spec) {
  std::vector<std::string> lines;
  for (const TileResolution& r : spec.tile_resolutions)
    if (r.problem)
      lines.push_back("targets." + r.target + " " + tile_pass_name(r.pass) + " tiles are \"auto\": " + *r.problem +
                      ". Fix with: make tune SPEC=" + spec.source + " (kgen tune " + spec.source + " --target " +
                      r.target + " --pass " + tile_pass_name(r.pass) + ")");
  return lines;
}

}  // namespace kgen
