// The sm100a target: FlashAttention-4-class kernels on CUTLASS/CuTe for Blackwell
// (docs/sm100a-kernel.md). Compiled and inspected only: no Blackwell GPU exists here.
#include <cstdint>
#include <limits>
#include <ostream>

#include "diagnostics.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/forward_plan.h"
#include "targets/sm100a/kernel_plan.h"

namespace kgen {
namespace {

class Sm100a final : public CudaTarget {
 public:
  Sm100a() : CudaTarget("sm100a", "sm_100a", &Spec::sm100a, /*sms=*/148) {}  // a B200
  KernelPlan plan(const Spec& spec) const override { return plan_sm100a_kernel(spec); }

  // Its tuning table is the part it is planned for (148 SMs).
  std::string tuning_device(const Spec&) const override { return "b200"; }

  // The kernel, the launcher header and the runtime headers it is compiled with; compiled and
  // inspected (nvcc_sass) and executed on ptxemu (cpu_emulation), the only place an sm100a
  // kernel runs: no Blackwell GPU exists here.
  ReceiptRule receipt_rule() const override {
    return ReceiptRule{{".sm100a.cu", ".sm100a.h"}, {"nvcc_sass", "cpu_emulation"}, {}, runtime_folders()};
  }

 protected:
  MemoryBudget smem_budget(const Spec& spec, const GpuTarget& tiles) const override {
    return sm100a_smem_budget(spec, tiles);
  }

  void explain_grid(std::ostream& out, const Spec& spec, const TileShape& tiles) const override {
    const Sm100aPersistentGrid grid = sm100a_persistent_grid(spec);
    out << "    work items [batch, heads, q blocks] = [" << spec.shape.batch << ", " << spec.shape.q_heads << ", "
        << tiles.q_blocks() << "] = " << grid.work_items << ", walked by " << grid.ctas << " persistent CTAs (";
    if (spec.sm100a->persistent_ctas) out << "persistent_ctas " << *spec.sm100a->persistent_ctas << "; ";
    out << "docs/sm100a-kernel.md)\n";
  }

  void parse_options(JsonFields& fields, GpuTarget& gpu, std::vector<std::string>& known) const override {
    known.push_back("persistent_ctas");
    gpu.persistent_ctas = fields.optional_int("persistent_ctas", 1, std::numeric_limits<int32_t>::max());
    if (gpu.persistent_ctas && *gpu.persistent_ctas > kSm100aPersistentCtas)
      throw SpecError(fields.path_of("persistent_ctas"), std::to_string(*gpu.persistent_ctas),
                      "at most " + std::to_string(kSm100aPersistentCtas) +
                          " (one persistent CTA per SM of a B200; fewer cap the grid for a part with fewer SMs "
                          "or a GPU shared with other work)");
  }

  void add_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules) const override {
    rules.require(tiling.block_q == kSm100aBlockQ, "block_q", std::to_string(tiling.block_q),
                  "128 (one 128-row tcgen05 tile per work item: a tensor-memory lane per q row)");
    rules.require(tiling.block_kv == 64 || tiling.block_kv == 128, "block_kv", std::to_string(tiling.block_kv),
                  "64 or 128 (a softmax thread holds its row of S in registers, and P is written "
                  "to tensor memory 32 columns at a time)");
    if (rules.violation()) return;
    add_forward_table_rules(spec, tiling, rules);
  }
};

}  // namespace

const Target& sm100a_target() {
  static const Sm100a target;
  return target;
}

}  // namespace kgen
