#include "targets/sm90a/decode_plan.h"

#include <algorithm>

#include "explain.h"
#include "kernel_names.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/forward_plan.h"
#include "targets/cuda/source_text.h"
#include "targets/decode_rules.h"
#include "targets/sm90a/kernel_plan.h"
#include "targets/target.h"

namespace kgen {
namespace {

// wgmma N sizes CuTe declares without CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (kernel_plan.cc).
bool base_mma_n(int64_t n) {
  for (int64_t base : {8, 16, 32, 64, 96, 128, 192, 256})
    if (n == base) return true;
  return false;
}

// The shared memory of the kernel: one 64-row q tile (the forward's layout with one consumer
// warpgroup, sm90a/forward/kernel_traits.cuh) and the K/V ring.
MemoryBudget decode_smem_budget(const Spec& spec, int64_t block_kv) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  MemoryBudget budget;
  budget.items = {
      {"q tile (64 rows)", kRowsPerConsumerWarpgroup * d * e},
      {"k ring", kGpuKvStages * block_kv * d * e},
      {"v ring", kGpuKvStages * block_kv * dv * e},
      {"mbarriers", 1024},
  };
  return budget;
}

}  // namespace

Sm90aDecodeShape sm90a_decode_shape(const Spec& spec) {
  const Shape& s = spec.shape;
  const GpuTarget& gpu = *spec.sm90a;
  Sm90aDecodeShape shape;
  shape.rows = decode_rows(spec);
  shape.q_tiles = (shape.rows + kRowsPerConsumerWarpgroup - 1) / kRowsPerConsumerWarpgroup;
  shape.block_kv = gpu.block_kv;
  shape.splits = named_target(spec, "sm90a").decode_split(spec).splits;
  shape.kv_blocks = decode_kv_blocks(spec, gpu.block_kv);
  if (spec.decode->paged()) {
    shape.page_size = spec.decode->page_size;
    shape.pages = spec.decode->pages;
    shape.blocks_per_page = shape.page_size >= shape.block_kv ? shape.page_size / shape.block_kv : 0;
    shape.pages_per_block = shape.page_size < shape.block_kv ? shape.block_kv / shape.page_size : 0;
  }
  const Mask& mask = spec.masks.unique.front();
  if (mask.kind == Mask::Kind::kLocal && mask.left) shape.window_left = *mask.left;
  shape.stages = kGpuKvStages;
  shape.threads = 2 * 128;
  shape.batch = s.batch;
  shape.kv_heads = s.kv_heads;
  return shape;
}

std::optional<std::string> sm90a_decode_unsupported(const Spec& spec) {
  const GpuTarget& gpu = *spec.sm90a;
  if (spec.decode->paged() && gpu.block_kv > spec.decode->page_size && spec.decode->page_size % 8 != 0)
    return "target sm90a has no decode kernel yet for blocks of several pages of " +
           std::to_string(spec.decode->page_size) +
           " positions (its TMA boxes per page need pages of a multiple of 8 positions, whole 128-byte swizzle "
           "periods; a gather is not written)";
  const int64_t needed = sm90a_consumer_register_estimate(gpu.block_kv, spec.shape.head_dim_v, false);
  const int64_t available = sm90a_register_split(1).consumer;
  if (needed > available)
    return "target sm90a has no decode kernel for block_kv " + std::to_string(gpu.block_kv) + " with head_dim_v " +
           std::to_string(spec.shape.head_dim_v) + ": about " + std::to_string(needed) +
           " registers per consumer thread, above its " + std::to_string(available);
  return std::nullopt;
}

KernelPlan plan_sm90a_decode_kernel(const Spec& spec) {
  const Shape& s = spec.shape;
  const Sm90aDecodeShape shape = sm90a_decode_shape(spec);
  const Sm90aRegisterSplit registers = sm90a_register_split(1);
  const std::string symbol = kernel_symbol(spec.name, "sm90a");
  const std::string letters = dtype_info(spec.dtype).wgmma_letters;
  const int64_t shared_bytes = decode_smem_budget(spec, shape.block_kv).total();
  const double log2e = 1.4426950408889634;
  const std::vector<int64_t> grid = shape.grid();

  Json context = {
      {"symbol", symbol},
      {"header_file", generated_file_name(spec.name, "sm90a", "h")},
      {"dtype", dtype_name(spec.dtype)},
      {"element_type", dtype_info(spec.dtype).cutlass_type},
      {"batch", s.batch},
      {"q_heads", s.q_heads},
      {"kv_heads", s.kv_heads},
      {"group", s.group()},
      {"q_len", s.q_len},
      {"kv_len", s.kv_len},
      {"head_dim", s.head_dim},
      {"head_dim_v", s.head_dim_v},
      {"rows", shape.rows},
      {"q_tiles", shape.q_tiles},
      {"block_kv", shape.block_kv},
      {"kv_blocks", (s.kv_len + shape.block_kv - 1) / shape.block_kv},
      {"walk_blocks", shape.kv_blocks},
      {"splits", shape.splits},
      {"split", shape.split()},
      {"blocks_per_page", shape.blocks_per_page},
      {"pages_per_block", shape.pages_per_block},
      {"stages", shape.stages},
      {"threads", shape.threads},
      {"producer_registers", registers.producer},
      {"consumer_registers", registers.consumer},
      {"smem_budget", shared_bytes},
      {"extended_mma_shapes", !base_mma_n(shape.block_kv)},
      {"mma_qk", "cute::SM90_64x" + std::to_string(shape.block_kv) + "x16_F32" + letters +
                     "_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>"},
      {"mma_pv", "cute::SM90_64x" + std::to_string(s.head_dim_v) + "x16_F32" + letters +
                     "_RS<cute::GMMA::Major::K, cute::GMMA::Major::MN>"},
      {"mask_summary", spec.mask_summary},
      {"softcap", spec.softcap.has_value()},
      {"score_domain", spec.softcap ? "tanh(scale * q.k / softcap)" : "q.k, unscaled"},
      {"exp2_scale", cuda_float_literal(spec.softcap ? *spec.softcap * log2e : spec.scale * log2e)},
      {"score_mod", spec.softcap ? "kgen::cuda::Softcap<Config>" : "kgen::cuda::NoScoreMod"},
      {"device", "sm_90a (H100/H200)"},
      {"grid", std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2])},
  };
  if (spec.softcap) context["tanh_scale"] = cuda_float_literal(spec.scale / *spec.softcap);

  // The launcher header exports the numbers every caller (and the harness) needs.
  const Json header = {
      {"symbol", symbol},
      {"kernel_file", generated_file_name(spec.name, "sm90a", "cu")},
      {"score_formula", score_formula(spec)},
      {"mask_summary", spec.mask_summary},
      {"batch", s.batch},
      {"q_heads", s.q_heads},
      {"kv_heads", s.kv_heads},
      {"group", s.group()},
      {"q_len", s.q_len},
      {"kv_len", s.kv_len},
      {"head_dim", s.head_dim},
      {"head_dim_v", s.head_dim_v},
      {"rows", shape.rows},
      {"block_kv", shape.block_kv},
      {"splits", shape.splits},
      {"page_size", shape.page_size},
      {"pages", shape.pages},
      {"pages_per_sequence", spec.decode->paged() ? s.kv_len / shape.page_size : 0},
      {"window_left", shape.window_left},
      {"lse", spec.lse ? "true" : "false"},
      {"sinks", spec.sinks ? "true" : "false"},
      {"dtype", dtype_name(spec.dtype)},
      {"cuda_type", dtype_info(spec.dtype).cuda_spelling},
  };

  // What kgen audit holds the file to (docs/audit.md): the decode kernel on its grid, and the
  // combine on one CTA of 128 threads per (batch, kv head) when split.
  const Json block = {shape.threads, 1, 1};
  Json entry_points = Json::array();
  entry_points.push_back({{"name", "kgen::" + symbol + "::decode_kernel"},
                          {"params", {{{"name", "params"}, {"type", "Params const"}, {"grid_constant", true}}}},
                          {"launch_bounds", {{"max_threads", shape.threads}, {"min_blocks", 1}}},
                          {"launch", {{"grid", grid}, {"block", block}}},
                          {"dynamic_smem_bytes", shared_bytes}});
  if (shape.split())
    entry_points.push_back({{"name", "kgen::" + symbol + "::combine_kernel"},
                            {"params", {{{"name", "params"}, {"type", "CombineParams const"}, {"grid_constant", true}}}},
                            {"launch_bounds", {{"max_threads", 128}, {"min_blocks", 1}}},
                            {"launch", {{"grid", Json::array({s.kv_heads, s.batch, 1})}, {"block", Json::array({128, 1, 1})}}},
                            {"dynamic_smem_bytes", 0}});

  KernelPlan kernel;
  kernel.target = "sm90a";
  kernel.extension = "cu";
  kernel.template_path = "cuda/decode/kernel.cu.tmpl";
  kernel.symbol = symbol;
  kernel.context = std::move(context);
  kernel.interface = Json{{"entry_points", std::move(entry_points)}};
  // Its schedule promise, as a forward's (targets/cuda/forward_plan.h): the products of a tile
  // per main-loop iteration and whole-tile K and V loads. A block of several pages loads each
  // page in its own boxes, in a loop per page, so it promises only its products.
  kernel.schedule = {{"mma_per_iteration", cuda_products_per_tile(s.head_dim, shape.block_kv)}};
  if (!shape.pages_per_block) promise_whole_tile_loads(kernel, spec);
  kernel.extra_files.push_back({"cuda/decode/launcher.h.tmpl", "h", "launcher", header});
  return kernel;
}

void explain_sm90a_decode(std::ostream& out, const Spec& spec) {
  const Sm90aDecodeShape shape = sm90a_decode_shape(spec);
  const std::vector<int64_t> grid = shape.grid();
  out << "    kernel: grid [splits x q tiles, kv heads, batch] = [" << grid[0] << ", " << grid[1] << ", " << grid[2]
      << "]; per CTA a producer warpgroup (TMA) and one consumer warpgroup on one 64-row q tile ("
      << shape.q_tiles << " per (batch, kv head) for its " << shape.rows << " rows), a " << shape.stages
      << "-stage K/V ring\n";
  out << "      K/V: ";
  if (shape.pages_per_block)
    out << "per block " << shape.pages_per_block << " pages, each page_table[b][block * " << shape.pages_per_block
        << " + p] by its own TMA boxes (" << spec.shape.head_dim / 64 << " of K, " << spec.shape.head_dim_v / 64
        << " of V)";
  else if (shape.page_size)
    out << "one TMA box of " << shape.block_kv << " positions per block from the pool's page page_table[b][block / "
        << shape.blocks_per_page << "] (" << shape.blocks_per_page << " block(s) per page)";
  else
    out << "one TMA box of " << shape.block_kv << " positions per block from the contiguous cache";
  out << "; value rows at or past kv_lens[b] zeroed in shared memory before P V\n";
  out << "      scores: " << (spec.softcap ? "softcap, " : "") << "mask by position (token t at kv_lens[b] - "
      << spec.shape.q_len << " + t" << (shape.window_left >= 0 ? ", window of " + std::to_string(shape.window_left) + " left" : "")
      << ") on the blocks it touches; "
      << (shape.split() ? "partials out_s (f32) and lse_s per split, then the combine kernel (one CTA per (kv head, batch))"
                        : "out" + std::string(spec.lse ? " and lse" : "") + " written directly")
      << (spec.sinks ? (shape.split() ? "; the sink joins in the combine" : "; the sink joins the softmax") : "") << "\n";
  explain_budget(out, "shared memory", decode_smem_budget(spec, shape.block_kv), kGpuSmemLimit);
}

}  // namespace kgen
