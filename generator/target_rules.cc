#include "target_rules.h"

#include <algorithm>

#include "diagnostics.h"
#include "memory_budget.h"
#include "targets/sm90a/kernel_plan.h"
#include "spec.h"
#include "targets/tpu/generations.h"

namespace kgen {
namespace {

constexpr int64_t kMaxBlock = 1 << 14;

std::string kib(int64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

void require_divides(const std::string& path, int64_t block, const std::string& len_name,
                     int64_t len) {
  if (len % block != 0)
    throw SpecError(path, std::to_string(block),
                    "a divisor of " + len_name + " = " + std::to_string(len));
}

void require_multiple(const std::string& path, int64_t value, int64_t of, const std::string& why) {
  if (value % of != 0)
    throw SpecError(path, std::to_string(value),
                    "a multiple of " + std::to_string(of) + " (" + why + ")");
}

void check_tpu(const Spec& spec, const TpuTarget& tpu) {
  const std::string p = "targets.tpu.";
  const TpuGeneration& generation = *find_tpu_generation(tpu.generation);
  require_multiple(p + "block_kv", tpu.block_kv, kTpuLanes, "the lane width");
  require_multiple(p + "block_kv_compute", tpu.block_kv_compute, kTpuLanes, "the lane width");
  if (tpu.block_kv % tpu.block_kv_compute != 0)
    throw SpecError(p + "block_kv_compute", std::to_string(tpu.block_kv_compute),
                    "a divisor of block_kv = " + std::to_string(tpu.block_kv));
  const int64_t rows = tpu_sublane_rows(dtype_bytes(spec.dtype));
  require_multiple(p + "block_q", tpu.block_q, rows,
                   std::string("sublane tiling of ") + dtype_name(spec.dtype));
  require_divides(p + "block_q", tpu.block_q, "shape.q_len", spec.shape.q_len);
  require_divides(p + "block_kv", tpu.block_kv, "shape.kv_len", spec.shape.kv_len);

  const MemoryBudget vmem = tpu_vmem_budget(spec, tpu);
  if (vmem.total() > generation.vmem_bytes)
    throw SpecError(p + "block_q", std::to_string(tpu.block_q) + " with block_kv " +
                                       std::to_string(tpu.block_kv) + " (working set " +
                                       kib(vmem.total()) + ")",
                    "blocks whose working set fits the " + kib(generation.vmem_bytes) +
                        " of VMEM on " + tpu.generation);

  // The exact SMEM check of the block plan (kernel_plans.cc) must first build the plan,
  // at a cost of q_len * kv_blocks per mask. This lower bound on the plan's size (at
  // least two i32 tables; one row per q block, every row at least one step wide when
  // all heads share one mask, never shrunk when they do not) refuses hopeless tilings
  // before that work, which for the longest sequences runs for many minutes.
  const int64_t q_blocks = spec.shape.q_len / tpu.block_q;
  const int64_t kv_blocks = spec.shape.kv_len / tpu.block_kv;
  const int64_t min_plan_bytes = 2 * 4 * q_blocks *
                                 (spec.masks.shared() ? 1 : spec.shape.q_heads * kv_blocks);
  if (min_plan_bytes > generation.smem_bytes)
    throw SpecError(p + "block_kv", std::to_string(tpu.block_kv) + " with block_q " +
                                        std::to_string(tpu.block_q) + " (a block plan of at least " +
                                        std::to_string(min_plan_bytes) + " bytes)",
                    "blocks whose plan fits the " + std::to_string(generation.smem_bytes) +
                        " bytes of SMEM on " + tpu.generation);
}

void check_gpu(const Spec& spec, const GpuTarget& gpu, const std::string& target) {
  const std::string p = "targets." + target + ".";
  if (spec.dtype == DType::kFloat32)
    throw SpecError("dtype", "\"float32\"",
                    "bfloat16 or float16 for target " + target +
                        " (its tensor-core kernels have no float32 path)");
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  const bool supported_dims = (d == dv && (d == 64 || d == 128 || d == 256)) ||
                              (d == 192 && (dv == 128 || dv == 192));
  if (!supported_dims)
    throw SpecError("shape.head_dim", std::to_string(d) + " with head_dim_v " + std::to_string(dv),
                    "for target " + target +
                        ": head_dim = head_dim_v in {64, 128, 256}, or 192 with head_dim_v "
                        "128 or 192");
  if (gpu.block_q % 64 != 0 || gpu.block_q > 192)
    throw SpecError(p + "block_q", std::to_string(gpu.block_q),
                    "64, 128 or 192 (one consumer warpgroup per 64 rows)");
  if (gpu.block_kv % 16 != 0 || gpu.block_kv > 256)
    throw SpecError(p + "block_kv", std::to_string(gpu.block_kv),
                    "a multiple of 16 up to 256 (the wgmma/tcgen05 N granularity)");
  const MemoryBudget smem = gpu_smem_budget(spec, gpu);
  if (smem.total() > kGpuSmemLimit)
    throw SpecError(p + "block_kv", std::to_string(gpu.block_kv) + " with block_q " +
                                        std::to_string(gpu.block_q) + " (shared memory " +
                                        kib(smem.total()) + ")",
                    "blocks whose shared memory fits " + kib(kGpuSmemLimit));
  if (target == "sm90a") {
    // Each consumer warpgroup holds S (f32), P (16-bit) and O (f32) of its 64 rows in
    // registers; beyond setmaxnreg's share ptxas would spill them.
    const int64_t consumers = gpu.block_q / 64;
    const int64_t available = sm90a_register_split(consumers).consumer;
    const int64_t needed = sm90a_consumer_register_estimate(gpu.block_kv, dv, spec.segment_ids);
    if (needed > available)
      throw SpecError(p + "block_kv",
                      std::to_string(gpu.block_kv) + " with block_q " + std::to_string(gpu.block_q) +
                          " and head_dim_v " + std::to_string(dv) + " (about " + std::to_string(needed) +
                          " registers per consumer thread)",
                      "tiles whose S, P and O fragments fit the " + std::to_string(available) +
                          " registers of a consumer thread with " + std::to_string(consumers) +
                          " consumer warpgroup(s): block_kv * 3/4 + head_dim_v / 2 + 32" +
                          (spec.segment_ids ? " + block_kv / 4 + 8 (segment ids)" : "") + " <= " +
                          std::to_string(available));
  }
}

}  // namespace

TpuTarget parse_tpu_target(const Json& object, const std::string& path) {
  JsonFields fields(object, path);
  TpuTarget tpu;
  tpu.generation = fields.required_string("generation");
  if (!find_tpu_generation(tpu.generation)) {
    std::string names;
    for (const TpuGeneration& g : tpu_generations()) names += (names.empty() ? "" : ", ") + std::string(g.name);
    throw SpecError(fields.path_of("generation"), describe_value(fields.raw("generation")),
                    "one of " + names);
  }
  tpu.block_q = fields.required_int("block_q", 8, kMaxBlock);
  tpu.block_kv = fields.required_int("block_kv", 128, kMaxBlock);
  tpu.block_kv_compute =
      fields.optional_int("block_kv_compute", 128, kMaxBlock).value_or(tpu.block_kv);
  fields.reject_unknown({"generation", "block_q", "block_kv", "block_kv_compute"});
  return tpu;
}

GpuTarget parse_gpu_target(const Json& object, const std::string& path) {
  JsonFields fields(object, path);
  GpuTarget gpu;
  gpu.block_q = fields.required_int("block_q", 64, kMaxBlock);
  gpu.block_kv = fields.required_int("block_kv", 16, kMaxBlock);
  fields.reject_unknown({"block_q", "block_kv"});
  return gpu;
}

void check_target_constraints(const Spec& spec) {
  if (spec.tpu) check_tpu(spec, *spec.tpu);
  if (spec.sm90a) check_gpu(spec, *spec.sm90a, "sm90a");
  if (spec.sm100a) check_gpu(spec, *spec.sm100a, "sm100a");
}

}  // namespace kgen
