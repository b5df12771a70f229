#include "kernel_plans.h"

#include "diagnostics.h"
#include "memory_budget.h"
#include "targets/sm90a/kernel_plan.h"
#include "targets/tpu/generations.h"

namespace kgen {
namespace {

std::string symbol_for(const Spec& spec, const std::string& target) {
  return spec.name + "_" + target;
}

Json common_context(const Spec& spec, const std::string& target) {
  return Json{{"symbol", symbol_for(spec, target)}, {"dtype", dtype_name(spec.dtype)}};
}

}  // namespace

SplashPlan tpu_splash_plan(const Spec& spec) {
  const TpuTarget& tpu = *spec.tpu;
  SplashPlan plan = build_splash_plan(
      spec.masks, spec.shape.q_heads,
      TileShape{spec.shape.q_len, spec.shape.kv_len, tpu.block_q, tpu.block_kv});
  // block_mask, data_next and (when present) mask_next are prefetched into SMEM as i32.
  const int64_t tables = plan.has_mask_next ? 3 : 2;
  const int64_t smem = tables * 4 * static_cast<int64_t>(plan.block_mask.values.size());
  const int64_t limit = find_tpu_generation(tpu.generation)->smem_bytes;
  if (smem > limit)
    throw SpecError("targets.tpu.block_kv",
                    std::to_string(tpu.block_kv) + " with block_q " + std::to_string(tpu.block_q) +
                        " (a block plan of " + std::to_string(smem) + " bytes)",
                    "blocks whose plan fits the " + std::to_string(limit) + " bytes of SMEM on " +
                        tpu.generation);
  return plan;
}

TileShape gpu_tile_shape(const Spec& spec, const GpuTarget& target) {
  return TileShape{spec.shape.q_len, spec.shape.kv_len, target.block_q, target.block_kv};
}

KernelPlan plan_gpu_kernel(const Spec& spec, const std::string& target) {
  const GpuTarget& gpu = target == "sm90a" ? *spec.sm90a : *spec.sm100a;
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, gpu));
  KernelPlan kernel{target, "cu", target + "/forward/kernel.cu.tmpl", symbol_for(spec, target), false, {}, {}};
  kernel.context = common_context(spec, target);
  kernel.context.update(Json{
      {"block_q", gpu.block_q},
      {"block_kv", gpu.block_kv},
      {"live_tiles", lists.live_tiles_per_batch},
      {"total_tiles", lists.total_tiles_per_batch},
      {"smem_bytes", gpu_smem_budget(spec, gpu).total()},
  });
  return kernel;
}

std::vector<KernelPlan> plan_kernels(const Spec& spec) {
  std::vector<KernelPlan> plans;
  if (spec.tpu) plans.push_back(plan_tpu_kernel(spec));
  if (spec.sm90a) plans.push_back(plan_sm90a_kernel(spec));
  if (spec.sm100a) plans.push_back(plan_gpu_kernel(spec, "sm100a"));
  return plans;
}

}  // namespace kgen
