#include "targets/decode_rules.h"

#include <algorithm>

#include "diagnostics.h"

namespace kgen {

std::optional<int64_t> parse_decode_splits(JsonFields& fields, const Spec& spec) {
  if (!spec.decode) {
    if (fields.has("splits"))
      throw SpecError(fields.path_of("splits"), describe_value(fields.raw("splits")),
                      "absent: splits are for \"kind\": \"attention_decode\"");
    return std::nullopt;
  }
  if (fields.has("block_q"))
    throw SpecError(fields.path_of("block_q"), describe_value(fields.raw("block_q")),
                    "absent: a decode kernel's q tile is the group's q heads times the new tokens (docs/decode.md)");
  if (fields.has("backward"))
    throw SpecError(fields.path_of("backward"), describe_value(fields.raw("backward")),
                    "absent: decode kernels have no backward");
  return fields.optional_int("splits", 1, kMaxDecodeSplits);
}

void add_decode_rules(const Spec& spec, int64_t block_kv, std::optional<int64_t> splits, TilingRules& rules) {
  const Shape& s = spec.shape;
  rules.divides("block_kv", block_kv, "shape.kv_len", s.kv_len);
  if (spec.decode->paged()) {
    const int64_t page = spec.decode->page_size;
    rules.require(block_kv % page == 0 || page % block_kv == 0, "block_kv", std::to_string(block_kv),
                  "a multiple or a divisor of paged.page_size = " + std::to_string(page) +
                      " (a tile holds whole pages, or a page whole tiles)");
  }
  if (splits && !rules.violation()) {
    const int64_t blocks = decode_kv_blocks(spec, block_kv);
    rules.require(*splits <= blocks, "splits", std::to_string(*splits),
                  "at most " + std::to_string(blocks) + ", the kv blocks of block_kv " + std::to_string(block_kv) +
                      " one sequence reads (every split reads at least one)");
  }
}

int64_t decode_rows(const Spec& spec) { return spec.shape.group() * spec.shape.q_len; }

int64_t decode_kv_blocks(const Spec& spec, int64_t block_kv) {
  const int64_t cache = (spec.shape.kv_len + block_kv - 1) / block_kv;
  const Mask& mask = spec.masks.unique[0];
  if (mask.kind != Mask::Kind::kLocal || !mask.left) return cache;
  // The new tokens attend positions [first - left, last]: left + q_len positions.
  const int64_t span = *mask.left + spec.shape.q_len;
  return std::min(cache, (span + block_kv - 1) / block_kv + 1);
}

void explain_decode(std::ostream& out, const Spec& spec, int64_t block_kv, const DecodeWork& work,
                    const DecodeSplits& split, const char* units) {
  const Shape& s = spec.shape;
  out << "    q tile: " << decode_rows(spec) << " rows (" << s.group() << " q head" << (s.group() > 1 ? "s" : "")
      << " x " << s.q_len << " new token" << (s.q_len > 1 ? "s" : "") << ") per (batch, kv head)\n";
  out << "    kv walk: up to " << work.kv_blocks << " blocks of " << block_kv << " positions per sequence";
  if (spec.decode->paged()) {
    const int64_t page = spec.decode->page_size;
    out << " (" << (block_kv >= page ? std::to_string(block_kv / page) + " page(s) per block"
                                     : std::to_string(page / block_kv) + " blocks per page")
        << ")";
  }
  out << "; blocks wholly past kv_lens[b]" << (spec.masks.unique[0].kind == Mask::Kind::kLocal ? " or left of the window" : "")
      << " are skipped\n";
  out << "    splits: " << split.splits
      << (split.chosen ? " (chosen by kgen: the fewest splits of least critical path, docs/decode.md)" : " (as written)")
      << "; " << work.work_units << " work units x " << split.splits << " = " << work.work_units * split.splits
      << " for " << work.parallel_units << " " << units << "; " << decode_split_cost(work, split.splits)
      << " block reads on the critical path (" << decode_split_cost(work, 1) << " unsplit)"
      << (split.splits > 1 ? "; a combine merges the partial out and lse" : "") << "\n";
}

Json decode_plan_json(const Spec& spec, const char* target, int64_t block_kv, const DecodeWork& work,
                      const DecodeSplits& split) {
  const Shape& s = spec.shape;
  return Json{
      {"target", target},
      {"pass", "decode"},
      {"block_kv", block_kv},
      {"q_tile_rows", decode_rows(spec)},
      {"page_size", spec.decode->paged() ? Json(spec.decode->page_size) : Json()},
      {"kv_blocks", work.kv_blocks},
      {"splits", split.splits},
      {"splits_chosen", split.chosen},
      {"grid", {s.batch, s.kv_heads, split.splits}},
      {"parallel_units", work.parallel_units},
      {"critical_path_blocks", decode_split_cost(work, split.splits)},
  };
}

}  // namespace kgen
