// The tpu target: Splash-style Mosaic kernels for one TPU generation (docs/tpu-kernel.md).
#include <algorithm>
#include <sstream>

#include "block_plan.h"
#include "diagnostics.h"
#include "explain.h"
#include "memory_budget.h"
#include "targets/decode_rules.h"
#include "targets/target.h"
#include "targets/tile_fields.h"
#include "tiling_candidates.h"
#include "targets/tiling_rules.h"
#include "targets/tpu/backward_plan.h"
#include "targets/tpu/decode_plan.h"
#include "targets/tpu/generations.h"
#include "targets/tpu/kernel_plan.h"

namespace kgen {
namespace {

constexpr const char* kPath = "targets.tpu.";

constexpr const char* kBackwardPath = "targets.tpu.backward.";

// block_mask, data_next and (with partial blocks) mask_next are prefetched into SMEM as i32.
int64_t plan_smem_bytes(const SplashPlan& plan) {
  const int64_t tables = plan.has_mask_next ? 3 : 2;
  return tables * 4 * static_cast<int64_t>(plan.block_mask.values.size());
}

SplashPlan splash_plan(const Spec& spec, const Tiling& tiling, SplashPass pass = SplashPass::kForward) {
  return build_splash_plan(spec.masks, spec.shape.q_heads,
                           TileShape{spec.shape.q_len, spec.shape.kv_len, tiling.block_q, tiling.block_kv}, pass);
}

TpuTarget tpu_at(const Spec& spec, const Tiling& tiling) {
  return TpuTarget{spec.tpu->generation, tiling.block_q, tiling.block_kv, tiling.block_kv_compute, std::nullopt, std::nullopt};
}

// One kernel's claim on the tiling: its VMEM working set and the plan it prefetches to SMEM.
struct KernelNeeds {
  const char* kernel;  // "" for the forward, else "the dkv kernel", ...
  MemoryBudget vmem;
  SplashPass pass;
};

// docs/spec-format.md §5's rules for `tiling` (under `path`), then each kernel's VMEM and SMEM.
std::optional<TilingViolation> check_tpu_tiling(const Spec& spec, const Tiling& tiling, const std::string& path,
                                                const std::vector<KernelNeeds>& kernels) {
  TilingRules rules(path);
  const TpuGeneration& generation = *find_tpu_generation(spec.tpu->generation);
  const std::string dtype = dtype_name(spec.dtype);
  rules.multiple("block_kv", tiling.block_kv, kTpuLanes, "the lane width");
  rules.multiple("block_kv_compute", tiling.block_kv_compute, kTpuLanes, "the lane width");
  rules.divides("block_kv_compute", tiling.block_kv_compute, "block_kv", tiling.block_kv);
  rules.multiple("block_q", tiling.block_q, tpu_sublane_rows(dtype_bytes(spec.dtype)), "sublane tiling of " + dtype);
  rules.divides("block_q", tiling.block_q, "shape.q_len", spec.shape.q_len);
  rules.divides("block_kv", tiling.block_kv, "shape.kv_len", spec.shape.kv_len);
  if (rules.violation()) return rules.violation();

  const std::string blocks = std::to_string(tiling.block_q) + " with block_kv " + std::to_string(tiling.block_kv);
  const std::string kv_blocks_text = std::to_string(tiling.block_kv) + " with block_q " + std::to_string(tiling.block_q);
  for (const KernelNeeds& needs : kernels) {
    const std::string of = *needs.kernel ? std::string(" of ") + needs.kernel : "";
    rules.at_most("block_q", needs.vmem.total(), generation.vmem_bytes,
                  blocks + " (working set" + of + " " + kib(needs.vmem.total()) + ")",
                  "blocks whose working set fits the " + kib(generation.vmem_bytes) + " of VMEM on " +
                      generation.name);
    // The exact SMEM check builds the plan, at a cost of q_len * kv_blocks per mask. This lower
    // bound (at least two i32 tables; one step or more per line of the walk, a q block for the
    // forward and a kv block for dkv, when all heads share one mask; never shrunk when they do
    // not) refuses hopeless tilings before that work, which for the longest sequences runs for
    // many minutes.
    const int64_t q_blocks = spec.shape.q_len / tiling.block_q;
    const int64_t kv_blocks = spec.shape.kv_len / tiling.block_kv;
    const int64_t walked_lines = needs.pass == SplashPass::kForward ? q_blocks : kv_blocks;
    const int64_t min_plan_bytes =
        2 * 4 * (spec.masks.shared() ? walked_lines : spec.shape.q_heads * q_blocks * kv_blocks);
    const std::string smem_expected =
        "blocks whose plan fits the " + std::to_string(generation.smem_bytes) + " bytes of SMEM on " + generation.name;
    rules.at_most("block_kv", min_plan_bytes, generation.smem_bytes,
                  kv_blocks_text + " (a block plan" + of + " of at least " + std::to_string(min_plan_bytes) + " bytes)",
                  smem_expected);
    if (rules.violation()) return rules.violation();
    // The forward with segment ids also prefetches its two document range tables,
    // [batch][2][blocks] of i32 (docs/block-plan.md, "Tiles skipped across documents").
    const int64_t range_bytes =
        needs.pass == SplashPass::kForward && spec.segment_ids ? 4 * spec.shape.batch * 2 * (q_blocks + kv_blocks) : 0;
    const int64_t plan_bytes = plan_smem_bytes(splash_plan(spec, tiling, needs.pass)) + range_bytes;
    rules.at_most("block_kv", plan_bytes, generation.smem_bytes,
                  kv_blocks_text + " (a block plan" + of + " of " + std::to_string(plan_bytes) + " bytes)", smem_expected);
    if (rules.violation()) return rules.violation();
  }
  return std::nullopt;
}

// A decode kernel prefetches kv_lens and the page table into SMEM, as i32.
int64_t decode_prefetch_bytes(const Spec& spec) {
  const Shape& s = spec.shape;
  const int64_t table = spec.decode->paged() ? s.batch * (s.kv_len / spec.decode->page_size) : 0;
  return 4 * (s.batch + table);
}

// What of SMEM a decode kernel's tables may take: half of it, as vLLM's TPU backend allows its
// page table (../shared/reference/decode.md); Mosaic keeps its own scalars there too.
int64_t decode_smem_limit(const TpuGeneration& generation) { return generation.smem_bytes / 2; }

// The tpu decode kernel's own rules beyond add_decode_rules: its working set fits VMEM, its
// scalar-prefetched tables SMEM (a spec-level rule: its path is the page size or the batch).
std::optional<TilingViolation> tpu_decode_memory_violation(const Spec& spec, const Tiling& tiling) {
  const TpuGeneration& generation = *find_tpu_generation(spec.tpu->generation);
  const int64_t splits = decode_splits(DecodeWork{spec.shape.batch * spec.shape.kv_heads,
                                                  decode_kv_blocks(spec, tiling.block_kv), generation.kernel_cores},
                                       spec.tpu->splits)
                             .splits;
  TpuTarget at = *spec.tpu;
  at.block_kv = tiling.block_kv;
  at.block_kv_compute = tiling.block_kv_compute;
  TilingRules rules(kPath);
  const int64_t vmem = tpu_decode_vmem_budget(spec, at, splits).total();
  rules.at_most("block_kv", vmem, generation.vmem_bytes,
                std::to_string(tiling.block_kv) + " (working set " + kib(vmem) + ")",
                "a block whose working set fits the " + kib(generation.vmem_bytes) + " of VMEM on " + generation.name);
  if (rules.violation()) return rules.violation();
  const int64_t smem = decode_prefetch_bytes(spec), limit = decode_smem_limit(generation);
  if (smem <= limit) return std::nullopt;
  const bool paged = spec.decode->paged();
  return TilingViolation{paged ? "paged.page_size" : "shape.batch",
                         std::to_string(paged ? spec.decode->page_size : spec.shape.batch) + " (kv_lens" +
                             (paged ? " and a page table" : "") + " of " + std::to_string(smem) + " bytes in SMEM)",
                         "tables that fit " + std::to_string(limit) + " bytes, half of the " +
                             std::to_string(generation.smem_bytes) + " bytes of SMEM on " + generation.name +
                             (paged ? " (larger pages, or fewer sequences per call)" : " (fewer sequences per call)")};
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
    tpu.splits = parse_decode_splits(fields, spec);
    if (!spec.decode) tpu.block_q = required_tile(fields, "block_q", kMaxBlock, spec, name(), "block_q");
    tpu.block_kv = required_tile(fields, "block_kv", kMaxBlock, spec, name(), "block_kv");
    tpu.block_kv_compute =
        optional_tile(fields, "block_kv_compute", kMaxBlock, spec, name(), "block_kv_compute").value_or(tpu.block_kv);
    // Absent, block_kv_compute is block_kv: chosen with it when that is "auto".
    if (!fields.has("block_kv_compute") && is_auto_tile(spec, name(), "block_kv"))
      spec.auto_tiles[name()].insert("block_kv_compute");
    tpu.backward = parse_backward_tiles(fields, spec, /*has_block_kv_compute=*/true, &spec, name());
    fields.reject_unknown({"generation", "block_q", "block_kv", "block_kv_compute", "backward", "splits"});
    spec.tpu = tpu;
  }

  // A decode kernel's block_q is its q tile: the group's q heads times the new tokens.
  Tiling tiling(const Spec& spec) const override {
    return Tiling{spec.decode ? decode_rows(spec) : spec.tpu->block_q, spec.tpu->block_kv, spec.tpu->block_kv_compute};
  }

  std::optional<TilingViolation> check_tiling(const Spec& spec, const Tiling& tiling) const override {
    if (spec.decode) {
      // kv positions lie on lanes in the decode kernel's scores, as in the forward's.
      TilingRules rules(kPath);
      rules.multiple("block_kv", tiling.block_kv, kTpuLanes, "the lane width");
      rules.multiple("block_kv_compute", tiling.block_kv_compute, kTpuLanes, "the lane width");
      rules.divides("block_kv_compute", tiling.block_kv_compute, "block_kv", tiling.block_kv);
      if (!rules.violation()) add_decode_rules(spec, tiling.block_kv, spec.tpu->splits, rules);
      if (rules.violation()) return rules.violation();
      return tpu_decode_memory_violation(spec, tiling);
    }
    return check_tpu_tiling(spec, tiling, kPath,
                            {{"", tpu_vmem_budget(spec, tpu_at(spec, tiling)), SplashPass::kForward}});
  }

  // Units: batch x kv heads, each one q tile; the chip runs as many side by side as a kernel has
  // TensorCores (2 with megacore, else 1: a split then only helps across devices).
  DecodeSplits decode_split(const Spec& spec) const override { return decode_splits(decode_work(spec), spec.tpu->splits); }

  // The forward's tiles, unless its backward section says otherwise; when the backward kernels'
  // larger working set does not fit at those, block_kv_compute and then block_q are halved
  // until it does (or cannot be halved further, and check_backward_tiling says why).
  Tiling backward_tiling(const Spec& spec) const override {
    if (const std::optional<BackwardTiles>& written = spec.tpu->backward)
      return Tiling{written->block_q, written->block_kv, written->block_kv_compute};
    Tiling tiles = tiling(spec);
    while (check_backward_tiling(spec, tiles)) {
      if (tiles.block_kv_compute % (2 * kTpuLanes) == 0)
        tiles.block_kv_compute /= 2;
      else if (tiles.block_q % (2 * kTpuLanes) == 0)
        tiles.block_q /= 2;
      else
        break;
    }
    return tiles;
  }

  std::optional<TilingViolation> check_backward_tiling(const Spec& spec, const Tiling& tiling) const override {
    // The dkv kernel's tiles are transposed (kv on sublanes, q on lanes), so block_q is a lane
    // dimension there.
    TilingRules lanes(kBackwardPath);
    lanes.multiple("block_q", tiling.block_q, kTpuLanes, "the lane width: the dkv kernel puts q on lanes");
    if (lanes.violation()) return lanes.violation();
    const TpuTarget tpu = tpu_at(spec, tiling);
    return check_tpu_tiling(spec, tiling, kBackwardPath,
                            {{"the dkv kernel", tpu_dkv_vmem_budget(spec, tpu), SplashPass::kDkv},
                             {"the dq kernel", tpu_dq_vmem_budget(spec, tpu), SplashPass::kForward}});
  }

  KernelPlan plan(const Spec& spec) const override {
    if (spec.decode)
      return with_call_files(spec, plan_tpu_decode_kernel(spec, decode_split(spec).splits), PlanPass::kDecode);
    return with_call_files(spec, plan_tpu_kernel(spec), PlanPass::kForward);
  }

  // The tpu generates every decode spec its rules accept (docs/decode.md).
  std::optional<std::string> decode_unsupported(const Spec&) const override { return std::nullopt; }

  // Split, the combine; like every tpu kernel it has a tpu_custom_call payload beside it.
  std::optional<KernelPlan> decode_combine_plan(const Spec& spec) const override {
    const int64_t splits = decode_split(spec).splits;
    if (splits == 1) return std::nullopt;
    KernelPlan combine = plan_tpu_decode_combine(spec, splits);
    combine.companions.push_back({"custom_call.json", "custom_call", "kgen.jax.write_custom_calls"});
    return combine;
  }

  std::vector<KernelPlan> backward_plans(const Spec& spec) const override {
    std::vector<KernelPlan> kernels = plan_tpu_backward_kernels(spec, backward_tiling(spec));
    for (KernelPlan& kernel : kernels) {
      const PlanPass pass = kernel.pass == "dkv" ? PlanPass::kDkv : PlanPass::kDq;
      kernel = with_call_files(spec, std::move(kernel), pass);
    }
    return kernels;
  }

  // Each module and the operands file that fixes its calling contract: the forward's, and
  // with "backward": true the dq and dkv kernels'.
  ReceiptRule receipt_rule() const override {
    return ReceiptRule{{".tpu.mlir", ".tpu.operands.json"},
                       {"cpu_execution", "mosaic_dialect", "libtpu_compile"},
                       {},
                       {},
                       {".tpu.dq.mlir", ".tpu.dq.operands.json", ".tpu.dkv.mlir", ".tpu.dkv.operands.json"},
                       {".tpu.combine.mlir", ".tpu.combine.operands.json"}};
  }

  // Forward and dq walk Splash's forward MaskInfo, dkv its dkv MaskInfo (docs/spec-format.md §4,
  // §7); the backward passes at the backward tiles. `grid` is the kernel's: [batch, heads, q
  // blocks, kv steps], or for dkv [batch, kv blocks, heads, q steps].
  Json plan_json(const Spec& spec, PlanPass pass) const override {
    if (spec.decode.has_value() != (pass == PlanPass::kDecode))
      throw SpecError("--pass", std::string("\"") + plan_pass_name(pass) + "\"",
                      spec.decode ? "decode (the spec's kind is attention_decode)" : "forward, dq or dkv");
    if (spec.decode) return decode_plan_json(spec, name(), spec.tpu->block_kv, decode_work(spec), decode_split(spec));
    if (pass != PlanPass::kForward && !spec.backward)
      throw SpecError("--pass", std::string("\"") + plan_pass_name(pass) + "\"",
                      "forward (the spec has no \"backward\": true)");
    const SplashPlan plan = pass == PlanPass::kForward ? tpu_splash_plan(spec)
                            : splash_plan(spec, backward_tiling(spec),
                                          pass == PlanPass::kDkv ? SplashPass::kDkv : SplashPass::kForward);
    const Shape& s = spec.shape;
    const Json grid = plan.pass == SplashPass::kForward
                          ? Json{s.batch, s.q_heads, plan.block_mask.q_blocks, plan.width()}
                          : Json{s.batch, plan.block_mask.cols, s.q_heads, plan.width()};
    const bool with_partials = plan.has_mask_next;
    return Json{
        {"target", "tpu"},
        {"pass", plan_pass_name(pass)},
        {"block_q", plan.tiles.block_q},
        {"block_kv", plan.tiles.block_kv},
        {"grid", grid},
        {"block_mask", nested_table(plan.block_mask)},
        {"data_next", nested_table(plan.data_next)},
        {"mask_next", with_partials ? nested_table(plan.mask_next) : Json()},
        {"partial_blocks", with_partials ? Json(plan.partial_blocks) : Json()},
        {"partial_tile_mask", partial_tile_mask_name(plan.partial_mask)},
        {"live_blocks", s.batch * plan.live_tiles_per_batch},
        {"total_blocks", s.batch * plan.total_tiles_per_batch},
    };
  }

  // docs/tuning.md. Powers of two: block_q from 128 rows (a full MXU pass; less only when q_len
  // is shorter) to 2048, block_kv from one lane width to 4096, block_kv_compute from one lane
  // width to 2048; the backward's the same (its block_q lies on lanes in the dkv kernel).
  std::optional<TuningSpace> tuning_space(const Spec& spec, TilePass pass) const override {
    const Shape& s = spec.shape;
    const TpuGeneration& generation = *find_tpu_generation(spec.tpu->generation);
    TuningSpace space;
    // The kernels unroll a kv block's sub-tiles: past 8 of them the code only grows.
    space.skip = [](const TileChoice& tiles) {
      for (const char* prefix : {"", "backward."}) {
        const auto kv = tiles.find(std::string(prefix) + "block_kv");
        const auto compute = tiles.find(std::string(prefix) + "block_kv_compute");
        if (kv != tiles.end() && compute != tiles.end() && kv->second > 8 * compute->second) return true;
      }
      return false;
    };
    space.skip_why = "more than 8 sub-tiles per kv block (block_kv > 8 block_kv_compute)";
    const std::vector<int64_t> kv = powers_of_two(kTpuLanes, std::min<int64_t>(s.kv_len, 4096));
    const std::vector<int64_t> compute = powers_of_two(kTpuLanes, std::min<int64_t>(s.kv_len, 2048));
    if (spec.decode) {
      if (pass != TilePass::kDecode) return std::nullopt;
      space.axes = {{"block_kv", powers_of_two(kTpuLanes, std::min<int64_t>(s.kv_len, 8192))},
                    {"block_kv_compute", compute},
                    {"splits", powers_of_two(1, 64)}};
      Spec unsplit = spec;
      unsplit.tpu->splits.reset();
      space.preferred = {{"block_kv", 2048}, {"block_kv_compute", 512}, {"splits", decode_split(unsplit).splits}};
      space.preferred_why = "2048-position kv blocks of 512-lane sub-tiles, split by the split rule";
      return space;
    }
    if (pass == TilePass::kDecode || (pass == TilePass::kBackward && !spec.backward)) return std::nullopt;
    const int64_t rows = tpu_sublane_rows(dtype_bytes(spec.dtype));
    const int64_t q_floor = std::max<int64_t>(rows, std::min<int64_t>(128, s.q_len));
    const std::vector<int64_t> q = powers_of_two(pass == TilePass::kBackward ? kTpuLanes : q_floor,
                                                 std::min<int64_t>(s.q_len, 2048));
    const std::string prefix = pass == TilePass::kBackward ? "backward." : "";
    space.axes = {{prefix + "block_q", q}, {prefix + "block_kv", kv}, {prefix + "block_kv_compute", compute}};
    if (pass == TilePass::kForward) {
      space.preferred = {{"block_q", 512}, {"block_kv", 4 * generation.mxu_width}, {"block_kv_compute", 2 * generation.mxu_width}};
      space.preferred_why = "512 q rows, kv blocks of four MXU widths in sub-tiles of two on " + std::string(generation.name);
    } else {
      Spec unwritten = spec;
      unwritten.tpu->backward.reset();
      const Tiling rule = backward_tiling(unwritten);
      space.preferred = {{"backward.block_q", rule.block_q}, {"backward.block_kv", rule.block_kv},
                         {"backward.block_kv_compute", rule.block_kv_compute}};
      space.preferred_why = "the forward's tiles, halved until the backward's working set fits";
    }
    return space;
  }

  TileChoice tiles_of(const Spec& spec, TilePass pass) const override {
    const TpuTarget& tpu = *spec.tpu;
    switch (pass) {
      case TilePass::kForward:
        return {{"block_q", tpu.block_q}, {"block_kv", tpu.block_kv}, {"block_kv_compute", tpu.block_kv_compute}};
      case TilePass::kBackward: {
        const Tiling tiles = backward_tiling(spec);
        return {{"backward.block_q", tiles.block_q}, {"backward.block_kv", tiles.block_kv},
                {"backward.block_kv_compute", tiles.block_kv_compute}};
      }
      case TilePass::kDecode:
        return {{"block_kv", tpu.block_kv}, {"block_kv_compute", tpu.block_kv_compute}, {"splits", decode_split(spec).splits}};
    }
    return {};
  }

  void set_tiles(Spec& spec, TilePass pass, const TileChoice& choice) const override {
    TpuTarget& tpu = *spec.tpu;
    auto value = [&](const std::string& field, int64_t current) {
      const auto found = choice.find(field);
      return found == choice.end() ? current : found->second;
    };
    if (pass == TilePass::kBackward) {
      const Tiling now = backward_tiling(spec);
      tpu.backward = BackwardTiles{value("backward.block_q", now.block_q), value("backward.block_kv", now.block_kv),
                                   value("backward.block_kv_compute", now.block_kv_compute)};
      return;
    }
    if (pass == TilePass::kForward) tpu.block_q = value("block_q", tpu.block_q);
    tpu.block_kv = value("block_kv", tpu.block_kv);
    tpu.block_kv_compute = value("block_kv_compute", tpu.block_kv_compute);
    if (pass == TilePass::kDecode && choice.count("splits")) tpu.splits = choice.at("splits");
  }

  TilingFacts tiling_facts(const Spec& spec, TilePass pass) const override {
    TilingFacts facts;
    facts.memory = "VMEM";
    if (pass == TilePass::kForward) {
      const SplashPlan plan = tpu_splash_plan(spec);
      facts.live_tiles = plan.live_tiles_per_batch;
      facts.total_tiles = plan.total_tiles_per_batch;
      facts.memory_bytes = tpu_vmem_budget(spec, *spec.tpu).total();
    } else if (pass == TilePass::kBackward) {
      const Tiling tiles = backward_tiling(spec);
      const SplashPlan dkv = splash_plan(spec, tiles, SplashPass::kDkv), dq = splash_plan(spec, tiles);
      facts.live_tiles = dkv.live_tiles_per_batch + dq.live_tiles_per_batch;
      facts.total_tiles = dkv.total_tiles_per_batch + dq.total_tiles_per_batch;
      const TpuTarget at = tpu_at(spec, tiles);
      facts.memory_bytes = std::max(tpu_dkv_vmem_budget(spec, at).total(), tpu_dq_vmem_budget(spec, at).total());
    } else {
      const DecodeWork work = decode_work(spec);
      facts.live_tiles = work.work_units * work.kv_blocks / spec.shape.batch;
      facts.total_tiles = facts.live_tiles;
    }
    return facts;
  }

  std::string tuning_device(const Spec& spec) const override { return spec.tpu->generation; }
  TuningMeasurer tuning_measurer() const override { return {".venv-libtpu/bin/python", "bench/tpu_tune_measure.py"}; }

  void explain(std::ostream& out, const Spec& spec) const override {
    const TpuTarget& tpu = *spec.tpu;
    if (spec.decode) {
      out << "\n  tpu (" << tpu.generation << "): block_kv " << tpu.block_kv << ", block_kv_compute "
          << tpu.block_kv_compute << "\n";
      const DecodeSplits split = decode_split(spec);
      explain_decode(out, spec, tpu.block_kv, decode_work(spec), split, "TensorCore(s) per kernel");
      const TpuGeneration& generation = *find_tpu_generation(tpu.generation);
      explain_budget(out, "VMEM", tpu_decode_vmem_budget(spec, tpu, split.splits), generation.vmem_bytes);
      out << "    SMEM: kv_lens" << (spec.decode->paged() ? " and the page table" : "") << ", "
          << decode_prefetch_bytes(spec) << " bytes (at most " << decode_smem_limit(generation) << ")\n";
      return;
    }
    const SplashPlan plan = tpu_splash_plan(spec);
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
    const int64_t vmem_bytes = find_tpu_generation(tpu.generation)->vmem_bytes;
    explain_budget(out, "VMEM", tpu_vmem_budget(spec, tpu), vmem_bytes);
    if (spec.backward) explain_backward(out, spec, vmem_bytes);
    explain_maps(out, spec, plan.tiles);
  }

 private:
  DecodeWork decode_work(const Spec& spec) const {
    return DecodeWork{spec.shape.batch * spec.shape.kv_heads, decode_kv_blocks(spec, spec.tpu->block_kv),
                      find_tpu_generation(spec.tpu->generation)->kernel_cores};
  }

  // What a caller needs besides the kernel and its operands (python/kgen, docs/python.md): the
  // block plan its scalar-prefetch tables come from, and the tpu_custom_call payload that
  // kgen gen has kgen.jax.write_custom_calls write (with jaxlib's serializer).
  KernelPlan with_call_files(const Spec& spec, KernelPlan kernel, PlanPass pass) const {
    kernel.plan_file = plan_json(spec, pass);
    kernel.companions.push_back({"custom_call.json", "custom_call", "kgen.jax.write_custom_calls"});
    return kernel;
  }

  void explain_backward(std::ostream& out, const Spec& spec, int64_t vmem_bytes) const {
    const Tiling tiles = backward_tiling(spec);
    const SplashPlan dkv = splash_plan(spec, tiles, SplashPass::kDkv);
    const SplashPlan dq = splash_plan(spec, tiles, SplashPass::kForward);
    const Shape& s = spec.shape;
    out << "    backward: block_q " << tiles.block_q << ", block_kv " << tiles.block_kv << ", block_kv_compute "
        << tiles.block_kv_compute << (spec.tpu->backward ? "" : " (picked by kgen: targets.tpu.backward is absent)")
        << "\n";
    out << "      dkv grid [batch, kv blocks, heads, q steps] = [" << s.batch << ", " << dkv.block_mask.cols << ", "
        << s.q_heads << ", " << dkv.width() << "] (of " << dkv.tiles.q_blocks() << " q blocks)\n";
    out << "      dq grid [batch, heads, q blocks, kv steps] = [" << s.batch << ", " << s.q_heads << ", "
        << dq.block_mask.q_blocks << ", " << dq.width() << "]\n";
    out << "      live tiles: " << dkv.live_tiles_per_batch << " of " << dkv.total_tiles_per_batch
        << " per batch element, walked once by each kernel\n";
    const TpuTarget at = tpu_at(spec, tiles);
    explain_budget(out, "VMEM of the dkv kernel", tpu_dkv_vmem_budget(spec, at), vmem_bytes);
    explain_budget(out, "VMEM of the dq kernel", tpu_dq_vmem_budget(spec, at), vmem_bytes);
  }
};

}  // namespace

const Target& tpu_target() {
  static const Tpu target;
  return target;
}

SplashPlan tpu_splash_plan(const Spec& spec) { return splash_plan(spec, tpu_target().tiling(spec)); }

}  // namespace kgen
