#include "targets/cuda/cuda_target.h"

#include "diagnostics.h"
#include "explain.h"
#include "memory_budget.h"
#include "targets/tile_fields.h"
#include "tiling_candidates.h"

namespace kgen {

TileShape gpu_tile_shape(const Spec& spec, const GpuTarget& tiling) {
  return TileShape{spec.shape.q_len, spec.shape.kv_len, tiling.block_q, tiling.block_kv};
}

void CudaTarget::parse(const Json& object, const std::string& path, Spec& spec) const {
  JsonFields fields(object, path);
  GpuTarget gpu;
  gpu.splits = parse_decode_splits(fields, spec);
  if (!spec.decode) gpu.block_q = required_tile(fields, "block_q", kMaxBlock, spec, name_, "block_q");
  gpu.block_kv = required_tile(fields, "block_kv", kMaxBlock, spec, name_, "block_kv");
  gpu.backward = parse_backward_tiles(fields, spec, /*has_block_kv_compute=*/false, &spec, name_);
  std::vector<std::string> known{"block_q", "block_kv", "backward", "splits"};
  parse_options(fields, gpu, known);
  fields.reject_unknown(known);
  spec.*section_ = gpu;
}

// A decode kernel's block_q is its q tile: the group's q heads times the new tokens.
Tiling CudaTarget::tiling(const Spec& spec) const {
  const GpuTarget& gpu = *(spec.*section_);
  return Tiling{spec.decode ? decode_rows(spec) : gpu.block_q, gpu.block_kv, 0};
}

std::optional<TilingViolation> CudaTarget::check_tiling(const Spec& spec, const Tiling& tiling) const {
  const std::string target = name_;
  TilingRules rules("targets." + target + ".");
  if (spec.dtype == DType::kFloat32)
    return TilingViolation{"dtype", "\"float32\"",
                           "bfloat16 or float16 for target " + target + " (its tensor-core kernels have no float32 path)"};
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  const bool supported_dims = (d == dv && (d == 64 || d == 128 || d == 256)) || (d == 192 && (dv == 128 || dv == 192));
  if (!supported_dims)
    return TilingViolation{"shape.head_dim", std::to_string(d) + " with head_dim_v " + std::to_string(dv),
                           "for target " + target +
                               ": head_dim = head_dim_v in {64, 128, 256}, or 192 with head_dim_v 128 or 192"};
  rules.require(tiling.block_kv > 0 && tiling.block_kv % 16 == 0 && tiling.block_kv <= 256, "block_kv",
                std::to_string(tiling.block_kv), "a multiple of 16 up to 256 (the wgmma/tcgen05 N granularity)");
  if (spec.decode) {
    if (!rules.violation()) add_decode_rules(spec, tiling.block_kv, (spec.*section_)->splits, rules);
    return rules.violation();
  }
  rules.require(tiling.block_q > 0 && tiling.block_q % kRowsPerConsumerWarpgroup == 0 && tiling.block_q <= 192,
                "block_q", std::to_string(tiling.block_q), "64, 128 or 192 (one consumer warpgroup per 64 rows)");
  if (rules.violation()) return rules.violation();
  const MemoryBudget smem = smem_budget(spec, gpu_tiles(tiling));
  rules.at_most("block_kv", smem.total(), kGpuSmemLimit,
                std::to_string(tiling.block_kv) + " with block_q " + std::to_string(tiling.block_q) +
                    " (shared memory " + kib(smem.total()) + ")",
                "blocks whose shared memory fits " + kib(kGpuSmemLimit));
  if (rules.violation()) return rules.violation();
  add_rules(spec, tiling, rules);
  return rules.violation();
}

Tiling CudaTarget::backward_tiling(const Spec& spec) const {
  const GpuTarget& gpu = *(spec.*section_);
  return gpu.backward ? Tiling{gpu.backward->block_q, gpu.backward->block_kv, 0} : default_backward_tiling(spec);
}

std::optional<TilingViolation> CudaTarget::check_backward_tiling(const Spec& spec, const Tiling& tiling) const {
  const std::string path = std::string("targets.") + name_ + ".backward";
  if (const std::optional<std::string> why = backward_unsupported(spec)) {
    if (!(spec.*section_)->backward) return std::nullopt;  // the forward alone is generated
    return TilingViolation{path,
                           "{\"block_kv\":" + std::to_string(tiling.block_kv) + ",\"block_q\":" + std::to_string(tiling.block_q) + "}",
                           "no backward tiles: " + *why + " (docs/backward.md)"};
  }
  TilingRules rules(path + ".");
  add_backward_rules(spec, tiling, rules);
  return rules.violation();
}

std::vector<KernelPlan> CudaTarget::backward_plans(const Spec& spec) const {
  if (!spec.backward || backward_unsupported(spec)) return {};
  return plan_backward(spec, backward_tiling(spec));
}

DecodeWork CudaTarget::decode_work(const Spec& spec) const {
  const int64_t row_tiles = (decode_rows(spec) + kRowsPerConsumerWarpgroup - 1) / kRowsPerConsumerWarpgroup;
  return DecodeWork{spec.shape.batch * spec.shape.kv_heads * row_tiles,
                    decode_kv_blocks(spec, (spec.*section_)->block_kv), sms_};
}

DecodeSplits CudaTarget::decode_split(const Spec& spec) const {
  return decode_splits(decode_work(spec), (spec.*section_)->splits);
}

Json CudaTarget::plan_json(const Spec& spec, PlanPass pass) const {
  if (spec.decode.has_value() != (pass == PlanPass::kDecode))
    throw SpecError("--pass", std::string("\"") + plan_pass_name(pass) + "\"",
                    spec.decode ? "decode (the spec's kind is attention_decode)" : "forward");
  if (spec.decode) return decode_plan_json(spec, name_, (spec.*section_)->block_kv, decode_work(spec), decode_split(spec));
  if (pass != PlanPass::kForward)
    throw SpecError("--pass", std::string("\"") + plan_pass_name(pass) + "\"",
                    std::string("forward (target ") + name_ +
                        " plans no dq or dkv kernel: its backward is one kernel, which kgen explain shows)");
  const Tiling t = tiling(spec);
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, gpu_tiles(t)));
  const int64_t q_blocks = lists.tiles.q_blocks();
  auto per_row = [&](const std::vector<std::vector<int32_t>>& blocks) {
    Json rows = Json::array();
    for (int64_t r = 0; r < lists.rows; ++r) {
      Json qs = Json::array();
      for (int64_t q = 0; q < q_blocks; ++q) qs.push_back(blocks[static_cast<std::size_t>(r * q_blocks + q)]);
      rows.push_back(std::move(qs));
    }
    return rows;
  };
  return Json{
      {"target", name_},
      {"pass", "forward"},
      {"block_q", t.block_q},
      {"block_kv", t.block_kv},
      {"grid", {spec.shape.batch, spec.shape.q_heads, q_blocks}},
      {"partial_kv_blocks", per_row(lists.partial)},
      {"partial_tile_mask", partial_tile_mask_name(partial_tile_mask(spec.masks, lists))},
      {"full_kv_blocks", per_row(lists.full)},
      {"live_blocks", spec.shape.batch * lists.live_tiles_per_batch},
      {"total_blocks", spec.shape.batch * lists.total_tiles_per_batch},
  };
}

void CudaTarget::explain_grid(std::ostream& out, const Spec& spec, const TileShape& tiles) const {
  out << "    grid [batch, heads, q blocks] = [" << spec.shape.batch << ", " << spec.shape.q_heads << ", "
      << tiles.q_blocks() << "]\n";
}

void CudaTarget::explain(std::ostream& out, const Spec& spec) const {
  const GpuTarget& gpu = *(spec.*section_);
  if (spec.decode) {
    out << "\n  " << name_ << ": block_kv " << gpu.block_kv << "\n";
    explain_decode(out, spec, gpu.block_kv, decode_work(spec), decode_split(spec), "SMs");
    if (const std::optional<std::string> why = decode_unsupported(spec))
      out << "    kernel: not generated: " << *why << " (docs/decode.md)\n";
    else
      explain_decode_kernel(out, spec);
    return;
  }
  const TileShape tiles = gpu_tile_shape(spec, gpu);
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, tiles);
  out << "\n  " << name_ << ": block_q " << gpu.block_q << ", block_kv " << gpu.block_kv << "\n";
  explain_grid(out, spec, tiles);
  out << "    live tiles: " << lists.live_tiles_per_batch << " of " << lists.total_tiles_per_batch
      << " per batch element (" << fraction_skipped(lists.live_tiles_per_batch, lists.total_tiles_per_batch)
      << " skipped); " << describe_partial_tiles(partial_tile_mask(spec.masks, lists)) << "\n";
  explain_budget(out, "shared memory", smem_budget(spec, gpu), kGpuSmemLimit);
  if (spec.backward) {
    if (const std::optional<std::string> why = backward_unsupported(spec))
      out << "    backward: not generated: " << *why << " (docs/backward.md)\n";
    else
      explain_backward(out, spec, backward_tiling(spec));
  }
  explain_maps(out, spec, tiles);
}

std::optional<TuningSpace> CudaTarget::tuning_space(const Spec& spec, TilePass pass) const {
  if ((pass == TilePass::kDecode) != spec.decode.has_value()) return std::nullopt;
  if (pass == TilePass::kBackward && (!spec.backward || backward_unsupported(spec))) return std::nullopt;
  std::vector<int64_t> kv;
  for (int64_t v = 32; v <= 256; v += 32) kv.push_back(v);
  TuningSpace space;
  if (pass == TilePass::kDecode) {
    space.axes = {{"block_kv", kv}, {"splits", powers_of_two(1, 64)}};
    Spec unsplit = spec;
    (unsplit.*section_)->splits.reset();
    space.preferred = {{"block_kv", 128}, {"splits", decode_split(unsplit).splits}};
    space.preferred_why = "128-position kv blocks, split by the split rule";
    return space;
  }
  const std::vector<int64_t> q = {kRowsPerConsumerWarpgroup, 2 * kRowsPerConsumerWarpgroup, 3 * kRowsPerConsumerWarpgroup};
  if (pass == TilePass::kForward) {
    space.axes = {{"block_q", q}, {"block_kv", kv}};
    space.preferred = {{"block_q", 128}, {"block_kv", 128}};
    space.preferred_why = "two consumer warpgroups of 64 rows, 128-key tiles";
  } else {
    space.axes = {{"backward.block_q", q}, {"backward.block_kv", kv}};
    const Tiling rule = default_backward_tiling(spec);
    space.preferred = {{"backward.block_q", rule.block_q}, {"backward.block_kv", rule.block_kv}};
    space.preferred_why = std::string("target ") + name_ + "'s backward tiles for this shape";
  }
  return space;
}

TileChoice CudaTarget::tiles_of(const Spec& spec, TilePass pass) const {
  const GpuTarget& gpu = *(spec.*section_);
  switch (pass) {
    case TilePass::kForward: return {{"block_q", gpu.block_q}, {"block_kv", gpu.block_kv}};
    case TilePass::kBackward: {
      const Tiling tiles = backward_tiling(spec);
      return {{"backward.block_q", tiles.block_q}, {"backward.block_kv", tiles.block_kv}};
    }
    case TilePass::kDecode: return {{"block_kv", gpu.block_kv}, {"splits", decode_split(spec).splits}};
  }
  return {};
}

void CudaTarget::set_tiles(Spec& spec, TilePass pass, const TileChoice& choice) const {
  GpuTarget& gpu = *(spec.*section_);
  auto value = [&](const std::string& field, int64_t current) {
    const auto found = choice.find(field);
    return found == choice.end() ? current : found->second;
  };
  if (pass == TilePass::kBackward) {
    const Tiling now = backward_tiling(spec);
    gpu.backward = BackwardTiles{value("backward.block_q", now.block_q), value("backward.block_kv", now.block_kv), 0};
    return;
  }
  if (pass == TilePass::kForward) gpu.block_q = value("block_q", gpu.block_q);
  gpu.block_kv = value("block_kv", gpu.block_kv);
  if (pass == TilePass::kDecode && choice.count("splits")) gpu.splits = choice.at("splits");
}

TilingFacts CudaTarget::tiling_facts(const Spec& spec, TilePass pass) const {
  TilingFacts facts;
  facts.memory = "shared memory";
  if (pass == TilePass::kDecode) {
    const DecodeWork work = decode_work(spec);
    facts.live_tiles = work.work_units * work.kv_blocks / spec.shape.batch;
    facts.total_tiles = facts.live_tiles;
    return facts;
  }
  const Tiling t = pass == TilePass::kForward ? tiling(spec) : backward_tiling(spec);
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, gpu_tiles(t)));
  facts.live_tiles = lists.live_tiles_per_batch;
  facts.total_tiles = lists.total_tiles_per_batch;
  if (pass == TilePass::kForward) facts.memory_bytes = smem_budget(spec, gpu_tiles(t)).total();
  return facts;
}

}  // namespace kgen
