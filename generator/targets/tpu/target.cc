// The tpu target: Splash-style Mosaic kernels for one TPU generation (docs/tpu-kernel.md).
#include <sstream>

#include "block_plan.h"
#include "diagnostics.h"
#include "explain.h"
#include "memory_budget.h"
#include "targets/target.h"
#include "targets/tiling_rules.h"
#include "targets/tpu/generations.h"
#include "targets/tpu/kernel_plan.h"

namespace kgen {
namespace {

constexpr const char* kPath = "targets.tpu.";

// block_mask, data_next and (with partial blocks) mask_next are prefetched into SMEM as i32.
int64_t plan_smem_bytes(const SplashPlan& plan) {
  const int64_t tables = plan.has_mask_next ? 3 : 2;
  return tables * 4 * static_cast<int64_t>(plan.block_mask.values.size());
}

SplashPlan splash_plan(const Spec& spec, const Tiling& tiling) {
  return build_splash_plan(spec.masks, spec.shape.q_heads,
                           TileShape{spec.shape.q_len, spec.shape.kv_len, tiling.block_q, tiling.block_kv});
}

// A [rows][q blocks][columns] table as nested JSON arrays, as `kgen plan` prints it.
template <typename T>
Json nested_table(const Table3<T>& table) {
  Json rows = Json::array();
  for (int64_t r = 0; r < table.rows; ++r) {
    Json qs = Json::array();
    for (int64_t q = 0; q < table.q_blocks; ++q) {
      Json cols = Json::array();
      for (int64_t c = 0; c < table.cols; ++c) cols.push_back(static_cast<int64_t>(table.at(r, q, c)));
      qs.push_back(std::move(cols));
    }
    rows.push_back(std::move(qs));
  }
  return rows;
}

class Tpu final : public Target {
 public:
  const char* name() const override { return "tpu"; }
  bool named_by(const Spec& spec) const override { return spec.tpu.has_value(); }

  void parse(const Json& object, const std::string& path, Spec& spec) const override {
    JsonFields fields(object, path);
    TpuTarget tpu;
    tpu.generation = fields.required_string("generation");
    if (!find_tpu_generation(tpu.generation)) {
      std::string names;
      for (const TpuGeneration& g : tpu_generations()) names += (names.empty() ? "" : ", ") + std::string(g.name);
      throw SpecError(fields.path_of("generation"), describe_value(fields.raw("generation")), "one of " + names);
    }
    tpu.block_q = fields.required_int("block_q", 1, kMaxBlock);
    tpu.block_kv = fields.required_int("block_kv", 1, kMaxBlock);
    tpu.block_kv_compute = fields.optional_int("block_kv_compute", 1, kMaxBlock).value_or(tpu.block_kv);
    fields.reject_unknown({"generation", "block_q", "block_kv", "block_kv_compute"});
    spec.tpu = tpu;
  }

  Tiling tiling(const Spec& spec) const override {
    return Tiling{spec.tpu->block_q, spec.tpu->block_kv, spec.tpu->block_kv_compute};
  }

  std::optional<TilingViolation> check_tiling(const Spec& spec, const Tiling& tiling) const override {
    TilingRules rules(kPath);
    const TpuGeneration& generation = *find_tpu_generation(spec.tpu->generation);
    const std::string dtype = dtype_name(spec.dtype);
    rules.multiple("block_kv", tiling.block_kv, kTpuLanes, "the lane width");
    rules.multiple("block_kv_compute", tiling.block_kv_compute, kTpuLanes, "the lane width");
    rules.divides("block_kv_compute", tiling.block_kv_compute, "block_kv", tiling.block_kv);
    rules.multiple("block_q", tiling.block_q, tpu_sublane_rows(dtype_bytes(spec.dtype)), "sublane tiling of " + dtype);
    rules.divides("block_q", tiling.block_q, "shape.q_len", spec.shape.q_len);
    rules.divides("block_kv", tiling.block_kv, "shape.kv_len", spec.shape.kv_len);
    if (rules.violation()) return rules.violation();

    const TpuTarget tpu{spec.tpu->generation, tiling.block_q, tiling.block_kv, tiling.block_kv_compute};
    const std::string blocks = std::to_string(tiling.block_q) + " with block_kv " + std::to_string(tiling.block_kv);
    const MemoryBudget vmem = tpu_vmem_budget(spec, tpu);
    rules.at_most("block_q", vmem.total(), generation.vmem_bytes,
                  blocks + " (working set " + kib(vmem.total()) + ")",
                  "blocks whose working set fits the " + kib(generation.vmem_bytes) + " of VMEM on " + tpu.generation);

    // The exact SMEM check builds the plan, at a cost of q_len * kv_blocks per mask. This lower
    // bound (at least two i32 tables; one row per q block, every row at least one step wide when
    // all heads share one mask, never shrunk when they do not) refuses hopeless tilings before
    // that work, which for the longest sequences runs for many minutes.
    const int64_t q_blocks = spec.shape.q_len / tiling.block_q;
    const int64_t kv_blocks = spec.shape.kv_len / tiling.block_kv;
    const int64_t min_plan_bytes = 2 * 4 * q_blocks * (spec.masks.shared() ? 1 : spec.shape.q_heads * kv_blocks);
    const std::string smem_expected =
        "blocks whose plan fits the " + std::to_string(generation.smem_bytes) + " bytes of SMEM on " + tpu.generation;
    const std::string kv_blocks_text = std::to_string(tiling.block_kv) + " with block_q " + std::to_string(tiling.block_q);
    rules.at_most("block_kv", min_plan_bytes, generation.smem_bytes,
                  kv_blocks_text + " (a block plan of at least " + std::to_string(min_plan_bytes) + " bytes)",
                  smem_expected);
    if (rules.violation()) return rules.violation();
    const int64_t plan_bytes = plan_smem_bytes(splash_plan(spec, tiling));
    rules.at_most("block_kv", plan_bytes, generation.smem_bytes,
                  kv_blocks_text + " (a block plan of " + std::to_string(plan_bytes) + " bytes)", smem_expected);
    return rules.violation();
  }

  KernelPlan plan(const Spec& spec) const override { return plan_tpu_kernel(spec); }

  // The module and the operands file that fixes its calling contract.
  std::optional<ReceiptRule> receipt_rule() const override {
    return ReceiptRule{{".tpu.mlir", ".tpu.operands.json"}, {"cpu_execution", "mosaic_dialect", "libtpu_compile"}, {}, ""};
  }

  Json plan_json(const Spec& spec) const override {
    const SplashPlan plan = tpu_splash_plan(spec);
    const bool with_partials = plan.has_mask_next;
    return Json{
        {"target", "tpu"},
        {"block_q", plan.tiles.block_q},
        {"block_kv", plan.tiles.block_kv},
        {"grid", {spec.shape.batch, spec.shape.q_heads, plan.block_mask.q_blocks, plan.width()}},
        {"block_mask", nested_table(plan.block_mask)},
        {"data_next", nested_table(plan.data_next)},
        {"mask_next", with_partials ? nested_table(plan.mask_next) : Json()},
        {"partial_blocks", with_partials ? Json(plan.partial_blocks) : Json()},
        {"partial_tile_mask", partial_tile_mask_name(plan.partial_mask)},
        {"live_blocks", spec.shape.batch * plan.live_tiles_per_batch},
        {"total_blocks", spec.shape.batch * plan.total_tiles_per_batch},
    };
  }

  void explain(std::ostream& out, const Spec& spec) const override {
    const SplashPlan plan = tpu_splash_plan(spec);
    const TpuTarget& tpu = *spec.tpu;
    const Shape& s = spec.shape;
    out << "\n  tpu (" << tpu.generation << "): block_q " << tpu.block_q << ", block_kv " << tpu.block_kv
        << ", block_kv_compute " << tpu.block_kv_compute << "\n";
    out << "    grid [batch, heads, q blocks, kv steps] = [" << s.batch << ", " << s.q_heads << ", "
        << plan.block_mask.q_blocks << ", " << plan.width() << "] (of " << plan.tiles.kv_blocks() << " kv blocks)\n";
    out << "    live tiles: " << plan.live_tiles_per_batch << " of " << plan.total_tiles_per_batch
        << " per batch element (" << fraction_skipped(plan.live_tiles_per_batch, plan.total_tiles_per_batch)
        << " skipped); " << describe_partial_tiles(plan.partial_mask);
    if (plan.partial_mask == PartialTileMask::kBitmask)
      out << " (" << plan.partial_blocks.size() << " distinct mask blocks)";
    out << "\n";
    explain_budget(out, "VMEM", tpu_vmem_budget(spec, tpu), find_tpu_generation(tpu.generation)->vmem_bytes);
    explain_maps(out, spec, plan.tiles);
  }
};

}  // namespace

const Target& tpu_target() {
  static const Tpu target;
  return target;
}

SplashPlan tpu_splash_plan(const Spec& spec) { return splash_plan(spec, tpu_target().tiling(spec)); }

}  // namespace kgen
