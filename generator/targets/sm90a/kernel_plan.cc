#include "targets/sm90a/kernel_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/forward_plan.h"

namespace kgen {
namespace {

// wgmma N sizes CuTe declares without CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED.
constexpr int64_t kBaseMmaN[] = {8, 16, 32, 64, 96, 128, 192, 256};
// Registers a consumer thread needs beyond its fragments (addresses, row statistics, loop
// state, mask and segment temporaries); calibrated on ptxas 13.0 reports.
constexpr int64_t kConsumerRegisterOverhead = 32;

}  // namespace

Sm90aRegisterSplit sm90a_register_split(int64_t consumers) {
  // Per SM: 65536 registers = 128 * producer + 128 * consumers * consumer, at most.
  switch (consumers) {
    case 1: return {56, 256};
    case 2: return {24, 240};
    case 3: return {32, 160};
  }
  throw std::logic_error("sm90a: 1 to 3 consumer warpgroups");
}

int64_t sm90a_consumer_register_estimate(int64_t block_kv, int64_t head_dim_v, bool segment_ids) {
  // Per thread of a 64-row warpgroup: S is 64 x block_kv f32 (block_kv / 2), P the same in
  // 16 bits (block_kv / 4), O is 64 x head_dim_v f32 (head_dim_v / 2); a thread's columns
  // of a tile have block_kv / 4 key segment ids.
  return block_kv / 2 + block_kv / 4 + head_dim_v / 2 + (segment_ids ? block_kv / 4 + 8 : 0) +
         kConsumerRegisterOverhead;
}

KernelPlan plan_sm90a_kernel(const Spec& spec) {
  const GpuTarget& gpu = *spec.sm90a;
  const int64_t consumers = gpu.block_q / kRowsPerConsumerWarpgroup;
  const Sm90aRegisterSplit registers = sm90a_register_split(consumers);
  const int64_t threads = 128 * (consumers + 1);  // a producer warpgroup and the consumers
  const CudaDevice device{"sm90a", "Hopper (sm_90a)", "sm_90a (H100/H200)", 9, 0};
  KernelPlan kernel = plan_cuda_forward(spec, gpu, device, threads, gpu_smem_budget(spec, gpu).total());
  kernel.template_path = "sm90a/forward/kernel.cu.tmpl";

  const bool extended = std::find(std::begin(kBaseMmaN), std::end(kBaseMmaN), gpu.block_kv) == std::end(kBaseMmaN);
  const std::string letters = dtype_info(spec.dtype).wgmma_letters;
  Json& context = kernel.context;
  context["consumers"] = consumers;
  // FlashAttention-3's ping-pong: two consumer warpgroups take turns to issue their GEMMs
  // (runtime/sm90a/forward/consumer/issue_turns.cuh), a named-barrier wait and arrival in every
  // main-loop iteration, which the plan promises and the compile check holds it to. Not with
  // three: ptxas then waits for P V(t - 1) before the whole softmax (gpt_oss_sinks_sliding_window
  // keeps none of its exponentials between the waits with the turns, all of them without;
  // docs/sm90a-kernel.md, "Ping-pong of the consumers").
  const bool ping_pong = consumers == 2;
  context["ping_pong"] = ping_pong ? "true" : "false";
  if (ping_pong && !kernel.schedule.is_null()) {
    kernel.schedule["min_bar_sync_in_main_loop"] = 1;
    kernel.schedule["min_bar_arv_in_main_loop"] = 1;
  }
  context["producer_registers"] = registers.producer;
  context["consumer_registers"] = registers.consumer;
  context["extended_mma_shapes"] = extended;
  context["mma_qk"] = "cute::SM90_64x" + std::to_string(gpu.block_kv) + "x16_F32" + letters +
                      "_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>";
  context["mma_pv"] = "cute::SM90_64x" + std::to_string(spec.shape.head_dim_v) + "x16_F32" + letters +
                      "_RS<cute::GMMA::Major::K, cute::GMMA::Major::MN>";
  return kernel;
}

}  // namespace kgen
