#include "targets/tpu/backward_plan.h"

#include <numbers>

#include "diagnostics.h"
#include "kernel_names.h"
#include "mask_printers.h"
#include "targets/tpu/generations.h"
#include "targets/tpu/kernel_plan.h"

namespace kgen {
namespace {

constexpr int64_t kSublanes = 8;

SplashPlan backward_splash_plan(const Spec& spec, const Tiling& tiles, PlanPass pass) {
  return build_splash_plan(spec.masks, spec.shape.q_heads,
                           TileShape{spec.shape.q_len, spec.shape.kv_len, tiles.block_q, tiles.block_kv},
                           pass == PlanPass::kDkv ? SplashPass::kDkv : SplashPass::kForward);
}

// The operands both kernels share after their own plan and k, v: out, dout and lse by q block.
void push_residuals(std::vector<TpuOperand>& operands, const Spec& spec, const Tiling& tiles) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  operands.push_back({"out", Role::kInput, t, {s.batch, s.q_heads, s.q_len, s.head_dim_v}, {1, 1, tiles.block_q, s.head_dim_v}, "vmem"});
  operands.push_back({"dout", Role::kInput, t, {s.batch, s.q_heads, s.q_len, s.head_dim_v}, {1, 1, tiles.block_q, s.head_dim_v}, "vmem"});
  operands.push_back({"lse", Role::kInput, "f32", {s.batch, s.q_heads, s.q_len, kTpuLanes}, {1, 1, tiles.block_q, kTpuLanes}, "vmem"});
}

std::vector<TpuOperand> dq_operands(const Spec& spec, const Tiling& tiles, const SplashPlan& plan) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  const int64_t bq = tiles.block_q, bkv = tiles.block_kv;
  std::vector<TpuOperand> operands = tpu_forward_walk_inputs(spec, bq, bkv, plan);
  push_residuals(operands, spec, tiles);
  operands.push_back({"dq", Role::kOutput, t, {s.batch, s.q_heads, s.q_len, s.head_dim}, {1, 1, bq, s.head_dim}, "vmem"});
  // One (8, 128) tile per (batch, head, q block), every element that q block's share of dsinks.
  if (spec.sinks)
    operands.push_back({"dsinks", Role::kOutput, "f32", {s.batch, s.q_heads, plan.block_mask.q_blocks * kSublanes, kTpuLanes},
                        {1, 1, kSublanes, kTpuLanes}, "vmem"});
  operands.push_back({"delta_scratch", Role::kScratch, "f32", {bq, kTpuLanes}, {}, "vmem"});
  operands.push_back({"dq_scratch", Role::kScratch, "f32", {bq, s.head_dim}, {}, "vmem"});
  return operands;
}

std::vector<TpuOperand> dkv_operands(const Spec& spec, const Tiling& tiles, const SplashPlan& plan) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  const int64_t bq = tiles.block_q, bkv = tiles.block_kv;
  std::vector<TpuOperand> operands = tpu_plan_and_qkv(spec, bq, bkv, plan);
  if (spec.segment_ids) {  // transposed tiles: q ids a row over the lanes, kv ids lane-replicated
    operands.push_back({"q_segment_ids", Role::kInput, "i32", {s.batch, kSublanes, s.q_len}, {1, kSublanes, bq}, "vmem"});
    operands.push_back({"kv_segment_ids", Role::kInput, "i32", {s.batch, s.kv_len, kTpuLanes}, {1, bkv, kTpuLanes}, "vmem"});
  }
  if (plan.has_mask_next) {
    const int64_t count = static_cast<int64_t>(plan.partial_blocks.size());
    operands.push_back({"partial_mask_blocks", Role::kInput, "i32", {count, bkv, bq}, {1, bkv, bq}, "vmem"});
  }
  push_residuals(operands, spec, tiles);
  operands.push_back({"dk", Role::kOutput, t, {s.batch, s.kv_heads, s.kv_len, s.head_dim}, {1, 1, bkv, s.head_dim}, "vmem"});
  operands.push_back({"dv", Role::kOutput, t, {s.batch, s.kv_heads, s.kv_len, s.head_dim_v}, {1, 1, bkv, s.head_dim_v}, "vmem"});
  operands.push_back({"dk_scratch", Role::kScratch, "f32", {bkv, s.head_dim}, {}, "vmem"});
  operands.push_back({"dv_scratch", Role::kScratch, "f32", {bkv, s.head_dim_v}, {}, "vmem"});
  return operands;
}

// The sub-tiles of a kv block, block_kv_compute keys each, unrolled; `chained` when each adds
// to the previous one's sum (`first`, `prev`); with `mask_ops`, the mask predicate over score
// tiles of `score_dims`, its names suffixed by the sub-tile.
Json subtiles(const Spec& spec, const Tiling& tiles, bool chained, bool mask_ops, const std::vector<int64_t>& score_dims) {
  const MaskProgram program = mask_ops ? lower_mask(spec.masks.unique.front()) : MaskProgram{};
  Json items = Json::array();
  for (int64_t sub = 0; sub < tiles.block_kv / tiles.block_kv_compute; ++sub) {
    Json item = {{"sub", sub},
                 {"kv_offset", sub * tiles.block_kv_compute},
                 {"kv_end", (sub + 1) * tiles.block_kv_compute}};
    if (chained) item["first"] = sub == 0;
    if (chained && sub > 0) item["prev"] = sub - 1;
    if (mask_ops) {
      item["block_start"] = sub == 0;
      const MlirMaskOps mask = mask_mlir_ops(program, vector_type(score_dims, "i32"), vector_type(score_dims, "i1"),
                                             "_" + std::to_string(sub));
      item["mask_ops"] = mask.ops;
      item["mask_result"] = mask.result;
    }
    items.push_back(std::move(item));
  }
  return items;
}

// What both templates read: the signature, the plan's spelling, the constants, the features
// and the types of the tiles they share.
Json common_context(const Spec& spec, const Tiling& tiles, const TpuBackwardKernel& kernel, const std::string& symbol,
                    const TpuSignature& sig, const std::vector<std::string>& window_kinds) {
  const Shape& s = spec.shape;
  const SplashPlan& plan = kernel.plan;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  const int64_t bq = tiles.block_q, bkv = tiles.block_kv, bkvc = tiles.block_kv_compute;
  const bool predicate = plan.partial_mask == PartialTileMask::kPredicate;
  Json context{
      {"symbol", symbol},
      {"kernel_args", sig.kernel_args},
      {"grid", join_dims(kernel.grid, ", ")},
      {"scalar_prefetch", plan.has_mask_next ? 3 : 2},
      {"windows", windows_context(sig.windows, window_kinds)},
      {"prefetch_params", sig.prefetch_params},
      {"mask_value", f32_literal(tpu_mask_value())},
      {"plan_per_head", plan.block_mask.rows != 1},
      {"plan_type", memref_type({plan.block_mask.rows, plan.block_mask.q_blocks, plan.block_mask.cols}, "i32", "smem")},
      {"group", s.group()},
      {"block_q", bq},
      {"block_kv", bkv},
      {"last_step", plan.width() - 1},
      {"scale", f32_literal(spec.scale)},
      {"minus_log2e", f32_literal(-std::numbers::log2e)},
      {"predicate_mask", predicate},
      {"partial_blocks", plan.has_mask_next},
      {"segment_ids", spec.segment_ids},
      {"selects_scores", plan.partial_mask != PartialTileMask::kNone || spec.segment_ids},
      {"narrow", spec.dtype != DType::kFloat32},
      {"lanes_f32", vector_type({bq, kTpuLanes}, "f32")},
      {"lanes_i1", vector_type({bq, kTpuLanes}, "i1")},
      {"row_f32", vector_type({bq}, "f32")},
      {"col_f32", vector_type({bq, 1}, "f32")},
      {"out_f32", vector_type({bq, s.head_dim_v}, "f32")},
  };
  context.update(base2_logit_constants(spec));
  context.update(tpu_tile_types(spec, bq, bkv, bkvc));
  return context;
}

KernelPlan dq_plan(const Spec& spec, const Tiling& tiles) {
  const TpuBackwardKernel kernel = tpu_backward_kernel(spec, tiles, PlanPass::kDq);
  const Shape& s = spec.shape;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  const int64_t bq = tiles.block_q, bkv = tiles.block_kv, bkvc = tiles.block_kv_compute;
  const std::string symbol = kernel_symbol(spec.name, "tpu", "dq");
  const TpuSignature sig = tpu_signature({"b_index", "h_index", "q_block", "kv_step"}, kernel.operands, forward_walk_window);
  Json context = common_context(spec, tiles, kernel, symbol, sig, forward_walk_window_kinds());
  const bool predicate = kernel.plan.partial_mask == PartialTileMask::kPredicate;
  const bool repeat = bkvc > kTpuLanes;
  // The forward's scores (tpu/forward/scores.mlir.tmpl), in a partial and a full copy.
  context.update(step_copies(kernel.plan,
                             Json{{"mask_tile", true},
                                  {"subtiles", subtiles(spec, tiles, true, predicate, {bq, bkvc})},
                                  {"segment_input", "s_masked"},
                                  {"softmax_input", spec.segment_ids ? "s_segmented" : "s_masked"},
                                  {"last_sub", bkv / bkvc - 1}},
                             Json{{"mask_tile", false},
                                  {"subtiles", subtiles(spec, tiles, true, false, {bq, bkvc})},
                                  {"segment_input", "logits"},
                                  {"softmax_input", spec.segment_ids ? "s_segmented" : "logits"},
                                  {"last_sub", bkv / bkvc - 1}}));
  context.update(Json{
      {"s_repeat", repeat},
      {"s_repeat_times", bkvc / kTpuLanes},
      {"neg_lse_s", repeat ? "neg_lse_s" : "neg_lse"},
      {"delta_s", repeat ? "delta_s" : "delta"},
      {"sinks", spec.sinks},
      {"sinks_type", memref_type({kSublanes, s.q_heads}, "f32", "smem")},
      {"log2e", f32_literal(std::numbers::log2e)},
      {"dsinks_memref", memref_type({1, 1, kSublanes, kTpuLanes}, "f32", "vmem")},
      {"s_f32", vector_type({bq, bkvc}, "f32")},
      {"s_i32", vector_type({bq, bkvc}, "i32")},
      {"s_i1", vector_type({bq, bkvc}, "i1")},
      {"s_elem", vector_type({bq, bkvc}, t)},
      {"row_i32", vector_type({1, bkvc}, "i32")},
      {"lanes_memref", memref_type({bq, kTpuLanes}, "f32", "vmem")},
      {"dq_f32", vector_type({bq, s.head_dim}, "f32")},
      {"dq_memref", memref_type({bq, s.head_dim}, "f32", "vmem")},
  });
  context.update(forward_walk_mask_types(bq, bkv, bkvc));
  return KernelPlan{"tpu", "mlir", "tpu/backward/dq.mlir.tmpl", symbol, std::move(context),
                    tpu_operands_json(symbol, kernel.grid, {"parallel", "parallel", "arbitrary", "arbitrary"}, kernel.operands),
                    nullptr, {}, "dq"};
}

KernelPlan dkv_plan(const Spec& spec, const Tiling& tiles) {
  const TpuBackwardKernel kernel = tpu_backward_kernel(spec, tiles, PlanPass::kDkv);
  const Shape& s = spec.shape;
  const std::string t = dtype_info(spec.dtype).mlir_type;
  const int64_t bq = tiles.block_q, bkv = tiles.block_kv, bkvc = tiles.block_kv_compute;
  const std::string symbol = kernel_symbol(spec.name, "tpu", "dkv");
  const std::vector<std::string> kinds = {"by_q_step", "by_kv_block", "q_ids", "kv_ids", "partial_mask"};
  const TpuSignature sig = tpu_signature({"b_index", "kv_block", "h_index", "q_step"}, kernel.operands, [](const TpuOperand& op) {
    const std::string kind = op.name == "k" || op.name == "v" || op.name == "dk" || op.name == "dv" ? "by_kv_block"
                             : op.name == "q_segment_ids"                                           ? "q_ids"
                             : op.name == "kv_segment_ids"                                          ? "kv_ids"
                             : op.name == "partial_mask_blocks"                                     ? "partial_mask"
                                                                                                    : "by_q_step";
    return TpuWindow{op.name, kind, op.block, false, kind == "by_q_step" || kind == "q_ids" || kind == "partial_mask"};
  });
  Json context = common_context(spec, tiles, kernel, symbol, sig, kinds);
  const bool predicate = kernel.plan.partial_mask == PartialTileMask::kPredicate;
  const bool repeat = bq > kTpuLanes;
  context.update(step_copies(kernel.plan,
                             Json{{"mask_tile", true},
                                  {"subtiles", subtiles(spec, tiles, false, predicate, {bkvc, bq})},
                                  {"segment_input", "s_masked"},
                                  {"softmax_input", spec.segment_ids ? "s_segmented" : "s_masked"}},
                             Json{{"mask_tile", false},
                                  {"subtiles", subtiles(spec, tiles, false, false, {bkvc, bq})},
                                  {"segment_input", "logits"},
                                  {"softmax_input", spec.segment_ids ? "s_segmented" : "logits"}}));
  context.update(Json{
      {"last_head_in_group", s.group() - 1},
      {"q_repeat", repeat},
      {"q_repeat_times", bq / kTpuLanes},
      {"kv_ids_s", repeat ? "kv_ids" : "kv_ids_lanes"},
      {"lanes_t_f32", vector_type({kTpuLanes, bq}, "f32")},
      {"q_row_f32", vector_type({1, bq}, "f32")},
      {"s_f32", vector_type({bkvc, bq}, "f32")},
      {"s_i32", vector_type({bkvc, bq}, "i32")},
      {"s_i1", vector_type({bkvc, bq}, "i1")},
      {"s_elem", vector_type({bkvc, bq}, t)},
      {"dk_part_f32", vector_type({bkvc, s.head_dim}, "f32")},
      {"dv_part_f32", vector_type({bkvc, s.head_dim_v}, "f32")},
      {"dk_f32", vector_type({bkv, s.head_dim}, "f32")},
      {"dv_f32", vector_type({bkv, s.head_dim_v}, "f32")},
      {"dk_memref", memref_type({bkv, s.head_dim}, "f32", "vmem")},
      {"dv_memref", memref_type({bkv, s.head_dim_v}, "f32", "vmem")},
      {"dk_tile", vector_type({bkv, s.head_dim}, t)},
      {"dv_tile", vector_type({bkv, s.head_dim_v}, t)},
      {"dk_window", vector_type({1, 1, bkv, s.head_dim}, t)},
      {"dv_window", vector_type({1, 1, bkv, s.head_dim_v}, t)},
      {"dk_out_memref", memref_type({1, 1, bkv, s.head_dim}, t, "vmem")},
      {"dv_out_memref", memref_type({1, 1, bkv, s.head_dim_v}, t, "vmem")},
      {"mask_memref", memref_type({1, bkv, bq}, "i32", "vmem")},
      {"mask_window", vector_type({1, bkvc, bq}, "i32")},
      {"q_ids_memref", memref_type({1, kSublanes, bq}, "i32", "vmem")},
      {"q_ids_window", vector_type({1, 1, bq}, "i32")},
      {"q_row_i32", vector_type({1, bq}, "i32")},
      {"kv_ids_memref", memref_type({1, bkv, kTpuLanes}, "i32", "vmem")},
      {"kv_ids_window", vector_type({1, bkvc, kTpuLanes}, "i32")},
      {"kv_ids_tile", vector_type({bkvc, kTpuLanes}, "i32")},
  });
  return KernelPlan{"tpu", "mlir", "tpu/backward/dkv.mlir.tmpl", symbol, std::move(context),
                    tpu_operands_json(symbol, kernel.grid, {"parallel", "parallel", "arbitrary", "arbitrary"}, kernel.operands),
                    nullptr, {}, "dkv"};
}

}  // namespace

TpuBackwardKernel tpu_backward_kernel(const Spec& spec, const Tiling& tiles, PlanPass pass) {
  const Shape& s = spec.shape;
  TpuBackwardKernel kernel{backward_splash_plan(spec, tiles, pass), {}, {}};
  if (pass == PlanPass::kDq) {
    kernel.grid = {s.batch, s.q_heads, kernel.plan.block_mask.q_blocks, kernel.plan.width()};
    kernel.operands = dq_operands(spec, tiles, kernel.plan);
  } else {
    kernel.grid = {s.batch, kernel.plan.block_mask.cols, s.q_heads, kernel.plan.width()};
    kernel.operands = dkv_operands(spec, tiles, kernel.plan);
  }
  return kernel;
}

std::vector<KernelPlan> plan_tpu_backward_kernels(const Spec& spec, const Tiling& tiles) {
  return {dq_plan(spec, tiles), dkv_plan(spec, tiles)};
}

}  // namespace kgen
