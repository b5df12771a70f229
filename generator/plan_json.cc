#include "plan_json.h"

#include "block_plan.h"
#include <algorithm>

#include "diagnostics.h"
#include "kernel_plans.h"

namespace kgen {
namespace {

template <typename T>
Json nested(const Table3<T>& table) {
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

Json tpu_plan_json(const Spec& spec) {
  const SplashPlan plan = tpu_splash_plan(spec);
  const bool with_partials = plan.has_mask_next;
  return Json{
      {"target", "tpu"},
      {"block_q", plan.tiles.block_q},
      {"block_kv", plan.tiles.block_kv},
      {"grid", {spec.shape.batch, spec.shape.q_heads, plan.block_mask.q_blocks, plan.width()}},
      {"block_mask", nested(plan.block_mask)},
      {"data_next", nested(plan.data_next)},
      {"mask_next", with_partials ? nested(plan.mask_next) : Json()},
      {"partial_blocks", with_partials ? Json(plan.partial_blocks) : Json()},
      {"live_blocks", spec.shape.batch * plan.live_tiles_per_batch},
      {"total_blocks", spec.shape.batch * plan.total_tiles_per_batch},
  };
}

Json gpu_plan_json(const Spec& spec, const std::string& target) {
  const GpuTarget& gpu = target == "sm90a" ? *spec.sm90a : *spec.sm100a;
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, gpu));
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
      {"target", target},
      {"block_q", gpu.block_q},
      {"block_kv", gpu.block_kv},
      {"grid", {spec.shape.batch, spec.shape.q_heads, q_blocks}},
      {"partial_kv_blocks", per_row(lists.partial)},
      {"partial_tile_mask", partial_tile_mask_name(partial_tile_mask(spec.masks, lists))},
      {"full_kv_blocks", per_row(lists.full)},
      {"live_blocks", spec.shape.batch * lists.live_tiles_per_batch},
      {"total_blocks", spec.shape.batch * lists.total_tiles_per_batch},
  };
}

}  // namespace

Json plan_json(const Spec& spec, const std::string& target) {
  const std::vector<std::string> names = spec.target_names();
  if (std::find(names.begin(), names.end(), target) == names.end())
    throw SpecError("--target", "\"" + target + "\"", "a target the spec names (under \"targets\")");
  return target == "tpu" ? tpu_plan_json(spec) : gpu_plan_json(spec, target);
}

}  // namespace kgen
