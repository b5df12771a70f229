// The sm90a target: FlashAttention-3-class kernels on CUTLASS/CuTe for Hopper
// (docs/sm90a-kernel.md).
#include "explain.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/forward_plan.h"
#include "targets/sm90a/backward_plan.h"
#include "targets/sm90a/decode_plan.h"
#include "targets/sm90a/kernel_plan.h"

namespace kgen {
namespace {

class Sm90a final : public CudaTarget {
 public:
  Sm90a() : CudaTarget("sm90a", "sm_90a", &Spec::sm90a, /*sms=*/132) {}  // an H100 SXM
  KernelPlan plan(const Spec& spec) const override {
    return spec.decode ? plan_sm90a_decode_kernel(spec) : plan_sm90a_kernel(spec);
  }
  // Its decode kernel and combine are one file (docs/decode.md, "The sm90a kernel").
  std::optional<std::string> decode_unsupported(const Spec& spec) const override {
    return sm90a_decode_unsupported(spec);
  }

  std::optional<std::string> backward_unsupported(const Spec& spec) const override {
    return sm90a_backward_unsupported(spec);
  }
  Tiling default_backward_tiling(const Spec& spec) const override {
    return Tiling{kSm90aBackwardBlockQ, sm90a_default_backward_block_kv(spec.shape), 0};
  }
  std::vector<KernelPlan> plan_backward(const Spec& spec, const Tiling& tiling) const override {
    return {plan_sm90a_backward_kernel(spec, gpu_tiles(tiling))};
  }

  // Its tuning table is the part it is planned for (132 SMs).
  std::string tuning_device(const Spec&) const override { return "h100_sxm"; }

  TilingFacts tiling_facts(const Spec& spec, TilePass pass) const override {
    TilingFacts facts = CudaTarget::tiling_facts(spec, pass);
    if (pass == TilePass::kBackward)
      facts.memory_bytes = sm90a_backward_smem_budget(spec, gpu_tiles(backward_tiling(spec))).total();
    return facts;
  }

  // The kernel, the launcher header, the backward's (where generated) and the runtime headers
  // they are compiled with; compiled and inspected (nvcc_sass), executed on ptxemu
  // (cpu_emulation); run on a GPU only where one was lent (gpu).
  ReceiptRule receipt_rule() const override {
    return ReceiptRule{{".sm90a.cu", ".sm90a.h"}, {"nvcc_sass", "cpu_emulation"}, {"gpu"}, runtime_folders(),
                       {".sm90a.backward.cu", ".sm90a.backward.h"}};
  }

 protected:
  void add_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules) const override {
    // Each consumer warpgroup holds S (f32), P (16-bit) and O (f32) of its 64 rows in
    // registers; beyond setmaxnreg's share ptxas would spill them.
    const int64_t consumers = tiling.block_q / kRowsPerConsumerWarpgroup;
    const int64_t available = sm90a_register_split(consumers).consumer;
    const int64_t dv = spec.shape.head_dim_v;
    const int64_t needed = sm90a_consumer_register_estimate(tiling.block_kv, dv, spec.segment_ids);
    rules.at_most("block_kv", needed, available,
                  std::to_string(tiling.block_kv) + " with block_q " + std::to_string(tiling.block_q) +
                      " and head_dim_v " + std::to_string(dv) + " (about " + std::to_string(needed) +
                      " registers per consumer thread)",
                  "tiles whose S, P and O fragments fit the " + std::to_string(available) +
                      " registers of a consumer thread with " + std::to_string(consumers) +
                      " consumer warpgroup(s): block_kv * 3/4 + head_dim_v / 2 + 32" +
                      (spec.segment_ids ? " + block_kv / 4 + 8 (segment ids)" : "") + " <= " +
                      std::to_string(available));
    if (rules.violation()) return;

    add_forward_table_rules(spec, tiling, rules);
  }

  void add_backward_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules) const override {
    rules.require(tiling.block_q == kSm90aBackwardBlockQ, "block_q", std::to_string(tiling.block_q),
                  "64 (the backward streams one 64-row q tile per step)");
    if (sm90a_backward_parts(spec.shape).count == 1)
      rules.require(tiling.block_kv == 64 || tiling.block_kv == 128, "block_kv", std::to_string(tiling.block_kv),
                    "64 or 128 (one consumer warpgroup per 64 kv rows, dK and dV in its registers)");
    else
      rules.require(tiling.block_kv == 64, "block_kv", std::to_string(tiling.block_kv),
                    "64 at head_dim " + std::to_string(spec.shape.head_dim) + " with head_dim_v " +
                        std::to_string(spec.shape.head_dim_v) +
                        " (two consumer warpgroups share the 64 kv rows' dK and dV columns)");
    if (rules.violation()) return;
    const GpuTarget tiles = gpu_tiles(tiling);
    const MemoryBudget smem = sm90a_backward_smem_budget(spec, tiles);
    rules.at_most("block_kv", smem.total(), kGpuSmemLimit,
                  std::to_string(tiling.block_kv) + " (shared memory " + kib(smem.total()) + ")",
                  "blocks whose shared memory fits " + kib(kGpuSmemLimit));
    const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, gpu_tile_shape(spec, tiles));
    const int64_t entries = cuda_tile_entries(lists);
    rules.at_most("block_kv", entries, kCudaMaxTileEntries,
                  std::to_string(tiling.block_kv) + " (" + std::to_string(entries) + " live tiles in the block plan)",
                  "tiles whose block plan lists at most " + std::to_string(kCudaMaxTileEntries) +
                      " live tiles (the tables are source text of the generated kernel)");
    if (partial_tile_mask(spec.masks, lists) == PartialTileMask::kBitmask) {
      const int64_t words = static_cast<int64_t>(transposed_mask_table(spec.masks, transpose_block_lists(lists)).bits.size());
      rules.at_most("block_kv", words, kCudaMaxMaskWords,
                    std::to_string(tiling.block_kv) + " (" + std::to_string(words) + " words of distinct partial-tile bits)",
                    "tiles whose distinct partial blocks fit the sm90a mask table");
    }
  }

  void explain_decode_kernel(std::ostream& out, const Spec& spec) const override { explain_sm90a_decode(out, spec); }

  void explain_backward(std::ostream& out, const Spec& spec, const Tiling& tiling) const override {
    const GpuTarget tiles = gpu_tiles(tiling);
    const TileShape shape = gpu_tile_shape(spec, tiles);
    const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, shape);
    const Shape& s = spec.shape;
    out << "    backward: block_q " << tiling.block_q << ", block_kv " << tiling.block_kv
        << " (preprocess, main, postprocess kernels; docs/sm90a-backward.md)\n";
    const Sm90aBackwardParts parts = sm90a_backward_parts(s);
    if (parts.count > 1)
      out << "      two consumer warpgroups per 64 kv rows, each over a window of " << parts.dk_width
          << " columns of dK (and dQ) and " << parts.dv_width << " of dV\n";
    out << "      main grid [batch * kv heads, kv blocks] = [" << s.batch * s.kv_heads << ", " << shape.kv_blocks()
        << "], each CTA walking the q blocks of its kv block for the " << s.group() << " q head(s) of its group\n";
    out << "      live tiles: " << lists.live_tiles_per_batch << " of " << lists.total_tiles_per_batch
        << " per batch element (" << fraction_skipped(lists.live_tiles_per_batch, lists.total_tiles_per_batch)
        << " skipped); " << describe_partial_tiles(partial_tile_mask(spec.masks, lists)) << "\n";
    explain_budget(out, "backward shared memory", sm90a_backward_smem_budget(spec, tiles), kGpuSmemLimit);
    out << "      workspace: " << kib(sm90a_backward_workspace_bytes(spec, tiles)) << " (f32 dq accumulator, lse, delta)\n";
  }
};

}  // namespace

const Target& sm90a_target() {
  static const Sm90a target;
  return target;
}

}  // namespace kgen
