// The attention mask of a spec (docs/spec-format.md §2): which key positions j each query position
// i may attend. One tree per distinct head mask; leaves are predicates or explicit bits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interval_set.h"
#include "json_fields.h"

namespace kgen {

struct Mask {
  enum class Kind { kFull, kCausal, kLocal, kChunkedCausal, kPrefixLm, kExplicit, kAnd, kOr };

  Kind kind = Kind::kFull;
  int64_t offset = 0;                     // causal, local
  std::optional<int64_t> left, right;     // local; nullopt = unbounded on that side
  int64_t chunk = 0;                      // chunked_causal
  int64_t prefix = 0;                     // prefix_lm
  std::shared_ptr<const std::vector<uint8_t>> bits;  // explicit: q_len x kv_len, 0/1
  int explicit_id = 0;                    // explicit: equal ids <=> equal bits
  std::vector<Mask> children;             // and, or
  int64_t kv_len = 0;                     // row length of `bits`

  // docs/spec-format.md §2's table, evaluated literally for one (i, j): the dense reference's view.
  bool allowed(int64_t i, int64_t j) const;
  // The same relation as the set of allowed j in [0, kv_len) for row i: the plan's view.
  IntervalSet row(int64_t i, int64_t kv_len) const;
  // True when a kernel can evaluate the mask from positions alone (no explicit leaf).
  bool is_predicate() const;
  // A string equal for two masks exactly when they are the same definition; explicit
  // leaves compare by content, as Splash's NumpyMask does.
  std::string identity() const;
};

// The mask of every query head: `unique` in order of first use, `head_to_unique[h]`.
struct HeadMasks {
  std::vector<Mask> unique;
  std::vector<int> head_to_unique;

  const Mask& of_head(int64_t head) const { return unique[head_to_unique[head]]; }
  bool shared() const { return unique.size() == 1; }
};

struct MaskContext {
  int64_t q_heads = 1;
  int64_t q_len = 1;
  int64_t kv_len = 1;
  std::string spec_dir;             // where "npy" paths are resolved from
  std::vector<std::string>* files;  // receives every mask file read, as written
};

// Parses the top-level "mask" value (absent: pass null) at JSON path `path`.
HeadMasks parse_head_masks(const Json& value, const std::string& path, const MaskContext& ctx);

}  // namespace kgen
