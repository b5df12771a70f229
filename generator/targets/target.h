// What every target provides, and the one list of targets (registry.cc). A target owns its
// spec section ("targets.<name>", read into Spec's field of that name), the rules its tilings
// must satisfy, its kernel plans, the JSON `kgen plan` prints for it, its part of `kgen
// explain`, its decode split's parallel units and its receipt rule. Outside
// generator/targets/, one file models target-specific facts: generator/memory_budget.cc, the
// working sets (tpu VMEM, the CUDA forwards' shared memory) that the targets' tiling rules
// and explain read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "decode_splits.h"
#include "json_fields.h"
#include "kernel_plans.h"
#include "receipts.h"
#include "spec.h"
#include "tile_choice.h"

namespace kgen {

// Block sizes of one kernel: what a spec's "targets.<name>" sets and a tuner varies.
// block_kv_compute is the tpu's compute sub-tile (0 elsewhere).
struct Tiling {
  int64_t block_q = 0;
  int64_t block_kv = 0;
  int64_t block_kv_compute = 0;
};

// Why a tiling is refused, as a SpecError says it: the JSON path, the value found, what was
// expected.
struct TilingViolation {
  std::string path;
  std::string found;
  std::string expected;
};

// The kernel whose block plan `kgen plan --pass` prints (docs/spec-format.md §7): the forward;
// the backward's dq kernel (the forward's walk, at the backward tiles); its dkv kernel (kv
// block by kv block, at the backward tiles).
// A decode spec has one pass, its split decode kernel (and the combine that merges the splits).
enum class PlanPass { kForward, kDq, kDkv, kDecode };
const char* plan_pass_name(PlanPass pass);  // "forward", "dq", "dkv", "decode"

// One tile field kgen tune varies and the values it tries (docs/tuning.md).
struct TileAxis {
  std::string field;            // as under "targets.<name>": "block_q", "backward.block_kv", "splits"
  std::vector<int64_t> values;  // ascending
};

// What kgen tune searches for one pass of a target, and where the default rule starts.
struct TuningSpace {
  std::vector<TileAxis> axes;
  // The default rule's starting point: "auto" fields with no tuned entry take the legal
  // candidate nearest it (docs/tuning.md).
  TileChoice preferred;
  std::string preferred_why;  // where `preferred` comes from, for kgen explain
  // Legal combinations the search leaves out (null: none), and why.
  std::function<bool(const TileChoice&)> skip;
  std::string skip_why;
};

// What kgen tune shows beside a candidate's cost.
struct TilingFacts {
  int64_t live_tiles = 0;    // per batch element, summed over the pass's kernels
  int64_t total_tiles = 0;
  int64_t memory_bytes = 0;  // the largest working set among the pass's kernels
  std::string memory;        // what it is: "VMEM", "shared memory"
};

// The program kgen tune runs to measure a target's candidates (docs/tuning.md, "Measurers").
struct TuningMeasurer {
  std::string python;  // relative to the project root: ".venv-libtpu/bin/python"
  std::string script;  // relative to the project root
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const char* name() const = 0;
  // True when the spec has a "targets.<name>" section.
  virtual bool named_by(const Spec& spec) const = 0;
  // The nvcc/Clang GPU architecture its CUDA kernels are built for ("sm_90a"); "" for a target
  // that does not emit CUDA.
  virtual const char* cuda_arch() const { return ""; }
  // The folders under runtime/ its kernels include: its own, and any it shares (a folder that
  // does not exist holds nothing: tpu kernels include no runtime).
  virtual std::vector<std::string> runtime_folders() const { return {name()}; }
  // Reads "targets.<name>" into `spec` (types and ranges only; check_tiling judges the values).
  virtual void parse(const Json& object, const std::string& path, Spec& spec) const = 0;
  // The tiling the spec asks for.
  virtual Tiling tiling(const Spec& spec) const = 0;
  // The first rule of docs/spec-format.md §5 (or of this target's budgets) that `tiling`
  // breaks for `spec`, or nothing when the kernel can be planned with it.
  virtual std::optional<TilingViolation> check_tiling(const Spec& spec, const Tiling& tiling) const = 0;
  // The backward kernels' tiles, for a spec with "backward": true: "targets.<name>.backward"
  // as written, else this target's choice.
  virtual Tiling backward_tiling(const Spec& spec) const = 0;
  // check_tiling's counterpart for the backward kernels; paths name "targets.<name>.backward".
  virtual std::optional<TilingViolation> check_backward_tiling(const Spec& spec, const Tiling& tiling) const = 0;
  // For a spec whose tiling passed check_tiling.
  virtual KernelPlan plan(const Spec& spec) const = 0;
  // The backward kernels, for a spec with "backward": true whose backward tiling passed.
  virtual std::vector<KernelPlan> backward_plans(const Spec& spec) const = 0;
  // SpecError (path "--pass") for a pass this target or spec has no kernel for.
  virtual Json plan_json(const Spec& spec, PlanPass pass) const = 0;
  // A decode spec's split of its KV walk (docs/decode.md): as written, else chosen for this
  // target's chip.
  virtual DecodeSplits decode_split(const Spec& spec) const = 0;
  // Why the target generates no decode kernel for a decode spec, or nothing.
  virtual std::optional<std::string> decode_unsupported(const Spec&) const {
    return std::string("target ") + name() + " generates no decode kernel yet";
  }
  // A decode spec's second kernel, the combine that merges its splits, when it has one.
  virtual std::optional<KernelPlan> decode_combine_plan(const Spec&) const { return std::nullopt; }
  virtual void explain(std::ostream& out, const Spec& spec) const = 0;
  // What its receipts cover and must hold (docs/receipts.md).
  virtual ReceiptRule receipt_rule() const = 0;

  // Tuning (docs/tuning.md): the tile fields of `pass` that kgen tune varies and a spec may
  // write "auto", or nothing when the target has no kernel of that pass for the spec.
  virtual std::optional<TuningSpace> tuning_space(const Spec&, TilePass) const { return std::nullopt; }
  // The spec's values of those fields (for the backward: its written or chosen tiles), and
  // the spec with `choice` written in.
  virtual TileChoice tiles_of(const Spec&, TilePass) const { return {}; }
  virtual void set_tiles(Spec&, TilePass, const TileChoice&) const {}
  virtual TilingFacts tiling_facts(const Spec&, TilePass) const { return {}; }
  // Which tuning table holds its entries: tuning/<name>/<device>.json, per TPU generation or
  // GPU part.
  virtual std::string tuning_device(const Spec&) const { return ""; }
  virtual TuningMeasurer tuning_measurer() const { return {}; }
};

// Every target, in the order specs, manifests and reports list them: tpu, sm90a, sm100a.
const std::vector<const Target*>& targets();
const Target* find_target(const std::string& name);
// The target `name` when the spec names it; else a SpecError on the command line's --target.
const Target& named_target(const Spec& spec, const std::string& name);

// check_tiling of the named target; SpecError when the spec does not name that target.
std::optional<TilingViolation> check_tiling(const Spec& spec, const std::string& target, const Tiling& tiling);

// Every target the spec names, at the spec's own tiling (and with backward, at its backward
// tiling); throws the first violation as a SpecError.
void check_target_constraints(const Spec& spec);

// Reads "<path>.backward" of a target section when present (docs/spec-format.md §7): block_q and
// block_kv, and block_kv_compute where the target has one (default block_kv). SpecError when
// the spec does not ask for the backward. With `autos`, a field may be "auto" (docs/tuning.md),
// recorded in autos->auto_tiles[target] as "backward.<field>".
std::optional<BackwardTiles> parse_backward_tiles(JsonFields& target_fields, const Spec& spec,
                                                  bool has_block_kv_compute, Spec* autos = nullptr,
                                                  const std::string& target = "");

}  // namespace kgen
