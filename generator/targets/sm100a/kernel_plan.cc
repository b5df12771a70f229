#include "targets/sm100a/kernel_plan.h"

#include <algorithm>
#include <string>

#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/forward_plan.h"
#include "targets/cuda/source_text.h"

namespace kgen {
namespace {

// How far (log2 units) a row max may rise before O is rescaled: P then stays below 2^8,
// which 16-bit P and f32 O hold exactly enough (FlashAttention-4's value for 16-bit inputs).
constexpr double kRescaleThreshold = 8.0;

}  // namespace

int64_t sm100a_tmem_columns(int64_t block_kv, int64_t head_dim_v) {
  int64_t columns = 32;
  while (columns < 2 * block_kv + head_dim_v) columns *= 2;
  return columns;
}

int64_t sm100a_mma_per_tile(int64_t head_dim, int64_t block_kv) { return cuda_products_per_tile(head_dim, block_kv); }

Sm100aPersistentGrid sm100a_persistent_grid(const Spec& spec) {
  const TileShape tiles = gpu_tile_shape(spec, *spec.sm100a);
  const int64_t work_items = spec.shape.batch * spec.shape.q_heads * tiles.q_blocks();
  return {work_items, std::min(work_items, spec.sm100a->persistent_ctas.value_or(kSm100aPersistentCtas))};
}

KernelPlan plan_sm100a_kernel(const Spec& spec) {
  const GpuTarget& gpu = *spec.sm100a;
  const Shape& s = spec.shape;
  const CudaDevice device{"sm100a", "Blackwell (sm_100a)", "sm_100a (B200)", 10, 0};
  KernelPlan kernel = plan_cuda_forward(spec, gpu, device, kSm100aThreads, sm100a_smem_budget(spec, gpu).total());
  kernel.template_path = "sm100a/forward/kernel.cu.tmpl";

  Json& context = kernel.context;
  context["tmem_columns"] = sm100a_tmem_columns(gpu.block_kv, s.head_dim_v);
  context["umma_per_tile"] = sm100a_mma_per_tile(s.head_dim, gpu.block_kv);
  context["softmax_registers"] = kSm100aRegisters.softmax;
  context["correction_registers"] = kSm100aRegisters.correction;
  context["other_registers"] = kSm100aRegisters.other;
  context["rescale_threshold"] = cuda_float_literal(kRescaleThreshold);

  // Persistent CTAs (docs/sm100a-kernel.md, "Persistent CTAs"): a one-dimensional grid.
  const Sm100aPersistentGrid grid = sm100a_persistent_grid(spec);
  context["work_items"] = grid.work_items;
  context["ctas"] = grid.ctas;
  context["persistent"] = true;
  context["grid"] = "Config::kCtas, 1, 1";
  kernel.interface["entry_points"][0]["launch"]["grid"] = Json{grid.ctas, 1, 1};
  return kernel;
}

}  // namespace kgen
