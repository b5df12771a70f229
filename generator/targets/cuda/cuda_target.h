// What the CUDA targets (sm90a, sm100a) share: their spec section (block_q, block_kv), the
// rules of tensor-core attention kernels, the FlexAttention-style kv block lists and how
// `kgen plan` and `kgen explain` show them. Each architecture adds its own rules and plan.
#pragma once

#include <optional>

#include "block_plan.h"
#include "memory_budget.h"
#include "targets/decode_rules.h"
#include "targets/target.h"
#include "targets/tiling_rules.h"

namespace kgen {

// Rows of q one consumer warpgroup owns: the M of a wgmma, and of the tcgen05 tiles too.
constexpr int64_t kRowsPerConsumerWarpgroup = 64;

TileShape gpu_tile_shape(const Spec& spec, const GpuTarget& tiling);

// A target section holding just `tiling`'s block sizes (for the budgets and tile shapes a
// tiling other than the spec's is judged by).
inline GpuTarget gpu_tiles(const Tiling& tiling) {
  GpuTarget tiles;
  tiles.block_q = tiling.block_q;
  tiles.block_kv = tiling.block_kv;
  return tiles;
}

class CudaTarget : public Target {
 public:
  // `sms`: the streaming multiprocessors of the part the kernels are planned for.
  CudaTarget(const char* name, const char* arch, std::optional<GpuTarget> Spec::*section, int64_t sms)
      : name_(name), arch_(arch), section_(section), sms_(sms) {}

  const char* name() const final { return name_; }
  const char* cuda_arch() const final { return arch_; }
  bool named_by(const Spec& spec) const final { return (spec.*section_).has_value(); }
  // runtime/cuda (what every CUDA kernel shares) and runtime/<name>.
  std::vector<std::string> runtime_folders() const final { return {"cuda", name_}; }
  void parse(const Json& object, const std::string& path, Spec& spec) const final;
  Tiling tiling(const Spec& spec) const final;
  std::optional<TilingViolation> check_tiling(const Spec& spec, const Tiling& tiling) const final;
  Tiling backward_tiling(const Spec& spec) const final;
  // With no backward kernel for the spec (backward_unsupported), backward tiles are refused;
  // else the shared rules and the architecture's.
  std::optional<TilingViolation> check_backward_tiling(const Spec& spec, const Tiling& tiling) const final;
  std::vector<KernelPlan> backward_plans(const Spec& spec) const final;
  Json plan_json(const Spec& spec, PlanPass pass) const final;
  void explain(std::ostream& out, const Spec& spec) const final;
  DecodeSplits decode_split(const Spec& spec) const final;

  // docs/tuning.md: block_q in whole consumer warpgroups (64, 128, 192), block_kv in multiples of
  // 32 up to 256 (forward, decode); the backward's the same; the architecture's checks keep
  // what it can run.
  std::optional<TuningSpace> tuning_space(const Spec& spec, TilePass pass) const override;
  TileChoice tiles_of(const Spec& spec, TilePass pass) const override;
  void set_tiles(Spec& spec, TilePass pass, const TileChoice& choice) const override;
  TilingFacts tiling_facts(const Spec& spec, TilePass pass) const override;
  TuningMeasurer tuning_measurer() const override { return {".venv/bin/python", "verify/cuda/tune_measure.py"}; }

 protected:
  // The forward kernel's shared memory at `tiles`.
  virtual MemoryBudget smem_budget(const Spec& spec, const GpuTarget& tiles) const { return gpu_smem_budget(spec, tiles); }
  // The architecture's own rules, run after the shared ones have passed.
  virtual void add_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules) const = 0;
  // Keys of its spec section beyond the shared ones: reads them into `gpu` (types and ranges
  // only) and adds their names to `known`.
  virtual void parse_options(JsonFields&, GpuTarget&, std::vector<std::string>&) const {}

  // The backward, per architecture. Why it has no backward kernel for `spec`, or nothing.
  virtual std::optional<std::string> backward_unsupported(const Spec&) const {
    return std::string("target ") + name_ + " generates no backward kernel yet";
  }
  // Its backward tiles when the spec sets none.
  virtual Tiling default_backward_tiling(const Spec& spec) const { return tiling(spec); }
  // Its rules for backward tiles (paths "targets.<name>.backward.").
  virtual void add_backward_rules(const Spec&, const Tiling&, TilingRules&) const {}
  virtual std::vector<KernelPlan> plan_backward(const Spec&, const Tiling&) const { return {}; }
  // Its lines of `kgen explain` for the backward.
  virtual void explain_backward(std::ostream&, const Spec&, const Tiling&) const {}
  // The launch grid, for `kgen explain`: one CTA per (batch, head, q block) unless the target
  // says otherwise.
  virtual void explain_grid(std::ostream& out, const Spec& spec, const TileShape& tiles) const;
  // Its lines of `kgen explain` for its decode kernel, after the shared decode lines.
  virtual void explain_decode_kernel(std::ostream&, const Spec&) const {}

 private:
  // Units: one per (batch, kv head, 64 rows of its q tile), as many side by side as SMs.
  DecodeWork decode_work(const Spec& spec) const;

  const char* name_;
  const char* arch_;
  std::optional<GpuTarget> Spec::*section_;
  int64_t sms_;
};

}  // namespace kgen
