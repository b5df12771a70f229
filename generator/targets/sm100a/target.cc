// The sm100a target (Blackwell): not generated yet. Its specs are validated like sm90a's and
// its file is a marked placeholder that `make test` reports as skipped.
#include "kernel_names.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"

namespace kgen {
namespace {

class Sm100a final : public CudaTarget {
 public:
  Sm100a() : CudaTarget("sm100a", "sm_100a", &Spec::sm100a) {}

  KernelPlan plan(const Spec& spec) const override {
    const KvBlockLists lists =
        build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, *spec.sm100a));
    KernelPlan kernel;
    kernel.target = name();
    kernel.extension = "cu";
    kernel.template_path = "sm100a/forward/kernel.cu.tmpl";
    kernel.symbol = kernel_symbol(spec.name, name());
    kernel.context = Json{
        {"symbol", kernel.symbol},
        {"dtype", dtype_name(spec.dtype)},
        {"block_q", spec.sm100a->block_q},
        {"block_kv", spec.sm100a->block_kv},
        {"live_tiles", lists.live_tiles_per_batch},
        {"total_tiles", lists.total_tiles_per_batch},
        {"smem_bytes", gpu_smem_budget(spec, *spec.sm100a).total()},
    };
    return kernel;
  }

 protected:
  void add_rules(const Spec&, const Tiling&, TilingRules&) const override {}
};

}  // namespace

const Target& sm100a_target() {
  static const Sm100a target;
  return target;
}

}  // namespace kgen
