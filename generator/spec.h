// A validated kernel spec (docs/spec-format.md §1): every default filled in, every value in range.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dtype.h"
#include "mask.h"
#include "tile_choice.h"

namespace kgen {

struct Shape {
  int64_t batch = 1;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;
  int64_t head_dim = 0;
  int64_t head_dim_v = 0;

  int64_t group() const { return q_heads / kv_heads; }  // q heads per kv head
};

// "targets.<t>.backward" (docs/spec-format.md §7): the backward kernels' tiles as written;
// block_kv_compute is the tpu's only. Absent, the target picks them (Target::backward_tiling).
struct BackwardTiles {
  int64_t block_q = 0;
  int64_t block_kv = 0;
  int64_t block_kv_compute = 0;
};

// A target section as written. A decode spec has no block_q (its q tile is the group's q heads
// times the new tokens, docs/decode.md) and may set splits; a forward spec has no splits.
struct TpuTarget {
  std::string generation;
  int64_t block_q = 0;
  int64_t block_kv = 0;
  int64_t block_kv_compute = 0;
  std::optional<BackwardTiles> backward;
  std::optional<int64_t> splits;  // decode: "targets.tpu.splits"; absent, decode_splits() chooses
};

struct GpuTarget {
  int64_t block_q = 0;
  int64_t block_kv = 0;
  std::optional<BackwardTiles> backward;
  std::optional<int64_t> splits;  // decode, as for the tpu
  // sm100a only: the cap on its persistent grid as written ("persistent_ctas"); absent, the
  // target's default (one CTA per SM of a B200).
  std::optional<int64_t> persistent_ctas;
};

// "kind": "attention_decode" (docs/spec-format.md §8): shape.q_len new tokens per sequence
// attend to a KV cache of capacity shape.kv_len; int32 kv_lens[batch] (valid entries, the new
// tokens included) comes at run time, new token t of sequence b sitting at position
// kv_lens[b] - q_len + t.
struct DecodeSpec {
  // "paged": the cache is a pool of `pages` pages of page_size positions per kv head, and
  // int32 page_table[batch][kv_len / page_size] comes at run time. 0: one contiguous cache
  // per sequence, as the forward's k and v.
  int64_t page_size = 0;
  int64_t pages = 0;

  bool paged() const { return page_size > 0; }
};

struct Spec {
  std::string name;
  std::string kind;
  Shape shape;
  DType dtype = DType::kBFloat16;
  double scale = 0;
  std::optional<double> softcap;
  bool segment_ids = false;
  bool sinks = false;
  bool lse = false;       // always true with backward: lse is the backward's residual
  bool backward = false;  // also generate the backward kernels (docs/spec-format.md §7)
  std::optional<DecodeSpec> decode;  // exactly when kind is "attention_decode"
  HeadMasks masks;
  std::string mask_summary;  // the "mask" value as written (compact JSON), for humans
  std::optional<TpuTarget> tpu;
  std::optional<GpuTarget> sm90a;
  std::optional<GpuTarget> sm100a;

  // Where the spec came from, as written in generated files: relative to the project
  // root when inside it, else the bare file name; never absolute.
  std::string source;
  std::vector<std::string> mask_files;  // npy files read, relative to the spec's folder

  // Tile fields written "auto" (docs/tuning.md), per target name: "block_q", "backward.block_kv".
  // Their values in the target sections are filled in by resolve_auto_tiles (auto_tiles.h),
  // which records how in `tile_resolutions`.
  std::map<std::string, std::set<std::string>> auto_tiles;
  std::vector<TileResolution> tile_resolutions;

  std::vector<std::string> target_names() const;  // in the registry's order (targets/target.h)
};

// Reads and validates a spec file. Throws SpecError naming the JSON path on any defect.
// `project_root` decides how `source` is written, and holds the tuning tables "auto" tile
// fields are read from (<project_root>/tuning, docs/tuning.md).
Spec load_spec(const std::string& file, const std::string& project_root);

// The same from JSON text; `spec_dir` resolves mask files; "auto" tile fields are read from
// the tables under `tuning_dir` ("": none, every "auto" field takes the default rule). Errors
// carry no file name.
Spec parse_spec(const std::string& text, const std::string& spec_dir, const std::string& tuning_dir = "");

}  // namespace kgen
