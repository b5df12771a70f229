#include "explain.h"

#include <cstdio>
#include <sstream>

#include "auto_tiles.h"
#include "block_plan.h"
#include "targets/target.h"

namespace kgen {
namespace {

constexpr int64_t kMapColumns = 96;
constexpr int64_t kMapRows = 64;

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// The distinct head masks of the plan and which heads use each.
std::string heads_using(const HeadMasks& masks, std::size_t unique) {
  if (masks.shared()) return "all " + std::to_string(masks.head_to_unique.size()) + " heads";
  std::string heads = "heads ";
  for (std::size_t h = 0; h < masks.head_to_unique.size(); ++h)
    if (masks.head_to_unique[h] == static_cast<int>(unique)) heads += (heads.empty() ? "" : ",") + std::to_string(h);
  return heads;
}

}  // namespace

std::string fraction_skipped(int64_t live, int64_t total) {
  return format("%.1f%%", 100.0 * static_cast<double>(total - live) / static_cast<double>(total));
}

std::string describe_partial_tiles(PartialTileMask mask) {
  switch (mask) {
    case PartialTileMask::kNone: return "no partial tiles";
    case PartialTileMask::kPredicate: return "partial tiles masked by the in-kernel predicate";
    case PartialTileMask::kBitmask: return "partial tiles masked by precomputed bits";
  }
  return "";
}

void explain_budget(std::ostream& out, const char* what, const MemoryBudget& budget, int64_t limit) {
  out << "    " << what << ": " << budget.total() << " bytes of " << limit << "\n";
  for (const auto& [item, bytes] : budget.items) out << "      " << item << ": " << bytes << "\n";
}

void explain_maps(std::ostream& out, const Spec& spec, const TileShape& tiles) {
  for (std::size_t u = 0; u < spec.masks.unique.size(); ++u) {
    const Table3<int8_t> classes = classify_tiles(spec.masks.unique[u], tiles);
    out << "    block map of " << heads_using(spec.masks, u) << " ('.' empty, '+' partial, '#' full; rows: q blocks):\n";
    out << draw_block_map(classes.values, classes.q_blocks, classes.cols, kMapColumns);
  }
}

std::string draw_block_map(const std::vector<int8_t>& classes, int64_t q_blocks, int64_t kv_blocks,
                           int64_t max_columns) {
  const int64_t per_column = (kv_blocks + max_columns - 1) / max_columns;
  const int64_t per_row = (q_blocks + kMapRows - 1) / kMapRows;
  std::string map;
  for (int64_t q0 = 0; q0 < q_blocks; q0 += per_row) {
    map += "      |";
    for (int64_t c0 = 0; c0 < kv_blocks; c0 += per_column) {
      bool any_live = false, all_full = true;
      for (int64_t q = q0; q < std::min(q_blocks, q0 + per_row); ++q)
        for (int64_t c = c0; c < std::min(kv_blocks, c0 + per_column); ++c) {
          const int8_t tile = classes[static_cast<std::size_t>(q * kv_blocks + c)];
          any_live = any_live || tile != kEmptyTile;
          all_full = all_full && tile == kFullTile;
        }
      map += all_full ? '#' : any_live ? '+' : '.';
    }
    map += "|\n";
  }
  if (per_row > 1 || per_column > 1)
    map += "      (each character: " + std::to_string(per_row) + " x " + std::to_string(per_column) + " tiles)\n";
  return map;
}

std::string explain_spec(const Spec& spec) {
  std::ostringstream out;
  const Shape& s = spec.shape;
  out << spec.name << " (" << spec.kind << ", from " << spec.source << ")\n";
  out << "  shape: batch " << s.batch << ", q_heads " << s.q_heads << ", kv_heads " << s.kv_heads
      << " (" << (s.kv_heads == 1 ? "MQA" : s.kv_heads == s.q_heads ? "MHA" : "GQA, group " + std::to_string(s.group()))
      << "), q_len " << s.q_len << ", kv_len " << s.kv_len << ", head_dim " << s.head_dim
      << ", head_dim_v " << s.head_dim_v << "\n";
  out << "  dtype: " << dtype_name(spec.dtype) << "; scale " << format("%.9g", spec.scale)
      << "; softcap " << (spec.softcap ? format("%.9g", *spec.softcap) : "none") << "\n";
  out << "  features: segment_ids " << (spec.segment_ids ? "yes" : "no") << ", sinks "
      << (spec.sinks ? "yes" : "no") << ", lse output " << (spec.lse ? "yes" : "no") << "\n";
  if (spec.decode) {
    out << "  decode: " << s.q_len << " new token(s) per sequence at positions kv_lens[b] - " << s.q_len
        << " + t, against a cache of " << s.kv_len << " positions per sequence, ";
    if (spec.decode->paged())
      out << "paged: pages of " << spec.decode->page_size << " positions, a pool of " << spec.decode->pages
          << " pages per kv head; run-time kv_lens[" << s.batch << "] and page_table[" << s.batch << "]["
          << s.kv_len / spec.decode->page_size << "]\n";
    else
      out << "contiguous; run-time kv_lens[" << s.batch << "]\n";
  }
  out << "  mask: " << spec.mask_summary << "\n";
  out << "    " << spec.masks.unique.size() << " distinct head mask(s), "
      << (partial_tile_mask(spec.masks, /*has_partial_tiles=*/true) == PartialTileMask::kPredicate
              ? "evaluated in-kernel from positions"
              : "partial tiles read from a mask table")
      << "\n";

  for (const Target* target : targets())
    if (target->named_by(spec)) target->explain(out, spec);
  out << explain_auto_tiles(spec);
  return out.str();
}

std::string explain_receipts(const Spec& spec, const ReceiptPaths& paths) {
  std::ostringstream out;
  out << "\n  receipts (" << paths.receipts << "/; make verify SPEC=" << spec.source << " regenerates them):\n";
  for (const std::string& target : spec.target_names()) {
    out << "    " << target << ": ";
    const ReceiptStatus status = kernel_receipt_status(paths, spec.name, target, *receipt_rule(target));
    out << status_name(status.kind);
    std::string checks;
    for (const std::string& check : status.checks) checks += (checks.empty() ? "" : ", ") + check;
    if (!checks.empty()) out << " (" << checks << ")";
    for (const std::string& reason : status.reasons) out << "; " << reason;
    out << "\n";
  }
  return out.str();
}

}  // namespace kgen
