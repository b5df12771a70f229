#include "targets/tpu/kernel_plan.h"

#include <algorithm>
#include <limits>
#include <numbers>

#include "diagnostics.h"
#include "kernel_names.h"
#include "mask_printers.h"
#include "memory_budget.h"
#include "targets/tpu/generations.h"

namespace kgen {
namespace {

constexpr int64_t kSublanes = 8;

// A kv block whose f32 scores and accumulator (block_q × (block_kv + head_dim_v)) take at
// most this much shares one softmax update across its sub-tiles; a larger one updates per
// sub-tile. From libtpu's bundle counts per full step (bench/tpu_static_cost.py,
// docs/tpu-kernel.md): one update took splash.json (v5e, 512 × 512 scores, head_dim_v 128,
// exactly this size) from 1,550 to 1,434 bundles, but mistral_7b_sliding_window (v6e,
// 512 × 1024) from 1,723 to 1,967 and gemma2_global_softcap (v5e, head_dim_v 256) from
// 2,437 to 2,545: more live tiles outweigh the saved reductions and rescales.
constexpr int64_t kMaxSharedUpdateBytes = 1280 * 1024;

// The order the kernel runs a kv block's sub-tiles in (subtiles.mlir.tmpl): the sub-tiles
// form groups that share a softmax update (all of them, or one each); the scores of group
// 0, then for each group the next group's scores before its own update. A sub-tile carries
// its keys and its place in its group's element-wise chains (`first`; `second` combines
// the group's first two; `later` extends the chain at `prev`); with `mask_ops`, the mask
// predicate, its names suffixed by the sub-tile. With `one_product`, a group of several
// sub-tiles multiplies its p by v in one product instead of one per sub-tile.
Json subtile_stages(const Spec& spec, bool mask_ops, bool one_product) {
  const TpuTarget& tpu = *spec.tpu;
  const int64_t bkvc = tpu.block_kv_compute, subtiles = tpu.block_kv / bkvc;
  const bool shared = tpu.block_q * (tpu.block_kv + spec.shape.head_dim_v) * 4 <= kMaxSharedUpdateBytes;
  const int64_t group_size = shared ? subtiles : 1;
  const std::string i32_type = vector_type({tpu.block_q, bkvc}, "i32");
  const std::string i1_type = vector_type({tpu.block_q, bkvc}, "i1");
  const std::string elem = std::string(dtype_info(spec.dtype).mlir_type);
  const MaskProgram mask_program = mask_ops ? lower_mask(spec.masks.unique.front()) : MaskProgram{};
  auto group = [&](int64_t g) {
    Json items = Json::array();
    for (int64_t sub = g * group_size; sub < (g + 1) * group_size; ++sub) {
      const int64_t place = sub - g * group_size;
      Json item = {{"sub", sub},
                   {"kv_offset", sub * bkvc},
                   {"kv_end", (sub + 1) * bkvc},
                   {"first", place == 0},
                   {"second", place == 1},
                   {"later", place > 1}};
      if (place > 0) item["prev"] = sub - 1;
      if (mask_ops) {
        item["block_start"] = sub == 0;  // keys from the kv block's first: no offset to add
        const MlirMaskOps mask = mask_mlir_ops(mask_program, i32_type, i1_type, "_" + std::to_string(sub));
        item["mask_ops"] = mask.ops;
        item["mask_result"] = mask.result;
      }
      items.push_back(std::move(item));
    }
    return items;
  };
  const int64_t groups = subtiles / group_size;
  std::vector<Json> members;
  for (int64_t g = 0; g < groups; ++g) members.push_back(group(g));
  auto scores = [&](int64_t g) { return Json{{"scores", true}, {"subtiles", members[g]}}; };
  // l's per-lane partial sums take the group's p (the last sub-tile's, or the chain summing
  // the group's sub-tiles) lane block by lane block: a chain of element-wise adds over its
  // 128-lane blocks, whose last value joins l (the p itself when it is one block wide).
  auto update = [&](int64_t g) {
    const int64_t last = (g + 1) * group_size - 1;
    const std::string suffix = "_g" + std::to_string(g);
    const std::string p_total = (group_size == 1 ? "p_" : "p_sum_") + std::to_string(last);
    const int64_t lane_block_count = bkvc / kTpuLanes;
    Json lane_blocks = Json::array();
    std::string lanes_total = p_total;
    if (lane_block_count > 1) {
      for (int64_t b = 0; b < lane_block_count; ++b) {
        Json block = {{"lane_block", b}, {"lane_offset", b * kTpuLanes}, {"chained", b > 0}};
        if (b == 1) block["lanes_prev"] = "p_lanes_0" + suffix;
        if (b > 1) block["lanes_prev"] = "p_lanes_sum_" + std::to_string(b - 1) + suffix;
        lane_blocks.push_back(std::move(block));
      }
      lanes_total = "p_lanes_sum_" + std::to_string(lane_block_count - 1) + suffix;
    }
    Json update = {{"scores", false},
                   {"group", g},
                   {"subtiles", members[g]},
                   {"single", group_size == 1},
                   {"last_sub", last},
                   {"lane_blocks", std::move(lane_blocks)},
                   {"p_lanes_total", lanes_total},
                   {"one_product", one_product && group_size > 1}};
    if (lane_block_count > 1) update["p_total"] = p_total;
    if (one_product && group_size > 1) {
      // The group's p (narrowed to the input type for 16-bit inputs) side by side: one
      // (block_q, group keys) operand for one p·v.
      const std::string p_name = spec.dtype != DType::kFloat32 ? "%p_narrow_" : "%p_";
      const int64_t keys = group_size * bkvc, head_dim_v = spec.shape.head_dim_v;
      std::string operands, types;
      for (int64_t sub = g * group_size; sub <= last; ++sub) {
        const std::string separator = sub == g * group_size ? "" : ", ";
        operands += separator + p_name + std::to_string(sub);
        types += separator + vector_type({tpu.block_q, bkvc}, elem);
      }
      update["first_sub"] = g * group_size;
      update["group_p_operands"] = operands;
      update["group_p_operand_types"] = types;
      update["group_p_type"] = vector_type({tpu.block_q, keys}, elem);
      update["group_v_window"] = vector_type({1, 1, keys, head_dim_v}, elem);
      update["group_v_tile"] = vector_type({keys, head_dim_v}, elem);
    }
    return update;
  };
  Json stages = Json::array({scores(0)});
  for (int64_t g = 0; g < groups; ++g) {
    if (g + 1 < groups) stages.push_back(scores(g + 1));
    stages.push_back(update(g));
  }
  return stages;
}

}  // namespace

TpuWindow forward_walk_window(const TpuOperand& op) {
  const std::string kind = op.name == "k" || op.name == "v"   ? "by_kv_block"
                           : op.name == "q_segment_ids"       ? "q_ids"
                           : op.name == "kv_segment_ids"      ? "kv_ids"
                           : op.name == "partial_mask_blocks" ? "partial_mask"
                           : op.name == "sinks"               ? "whole"
                                                              : "by_q_block";
  return TpuWindow{op.name, kind, op.block, kind == "whole", kind == "by_kv_block" || kind == "kv_ids" || kind == "partial_mask"};
}

const std::vector<std::string>& forward_walk_window_kinds() {
  static const std::vector<std::string> kinds = {"by_q_block", "by_kv_block", "q_ids", "kv_ids", "partial_mask", "whole"};
  return kinds;
}

float tpu_mask_value() { return -0.7f * std::numeric_limits<float>::max(); }

std::vector<TpuOperand> tpu_plan_and_qkv(const Spec& spec, int64_t block_q, int64_t block_kv, const SplashPlan& plan) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const std::string t = std::string(dtype_info(spec.dtype).mlir_type);
  const std::vector<int64_t> plan_shape = {plan.block_mask.rows, plan.block_mask.q_blocks, plan.block_mask.cols};
  std::vector<TpuOperand> operands = {
      {"data_next", Role::kScalarPrefetch, "i32", plan_shape, {}, "smem"},
      {"block_mask", Role::kScalarPrefetch, "i32", plan_shape, {}, "smem"},
  };
  if (plan.has_mask_next) operands.push_back({"mask_next", Role::kScalarPrefetch, "i32", plan_shape, {}, "smem"});
  operands.push_back({"q", Role::kInput, t, {s.batch, s.q_heads, s.q_len, s.head_dim}, {1, 1, block_q, s.head_dim}, "vmem"});
  operands.push_back({"k", Role::kInput, t, {s.batch, s.kv_heads, s.kv_len, s.head_dim}, {1, 1, block_kv, s.head_dim}, "vmem"});
  operands.push_back({"v", Role::kInput, t, {s.batch, s.kv_heads, s.kv_len, s.head_dim_v}, {1, 1, block_kv, s.head_dim_v}, "vmem"});
  return operands;
}

Json tpu_tile_types(const Spec& spec, int64_t bq, int64_t bkv, int64_t bkvc) {
  const Shape& s = spec.shape;
  const std::string t = std::string(dtype_info(spec.dtype).mlir_type);
  return Json{
      {"q_memref", memref_type({1, 1, bq, s.head_dim}, t, "vmem")},
      {"q_window", vector_type({1, 1, bq, s.head_dim}, t)},
      {"q_tile", vector_type({bq, s.head_dim}, t)},
      {"k_memref", memref_type({1, 1, bkv, s.head_dim}, t, "vmem")},
      {"k_window", vector_type({1, 1, bkvc, s.head_dim}, t)},
      {"k_tile", vector_type({bkvc, s.head_dim}, t)},
      {"v_memref", memref_type({1, 1, bkv, s.head_dim_v}, t, "vmem")},
      {"v_window", vector_type({1, 1, bkvc, s.head_dim_v}, t)},
      {"v_tile", vector_type({bkvc, s.head_dim_v}, t)},
      {"out_memref", memref_type({1, 1, bq, s.head_dim_v}, t, "vmem")},
      {"out_window", vector_type({1, 1, bq, s.head_dim_v}, t)},
      {"out_tile", vector_type({bq, s.head_dim_v}, t)},
      {"lse_memref", memref_type({1, 1, bq, kTpuLanes}, "f32", "vmem")},
      {"lse_window", vector_type({1, 1, bq, kTpuLanes}, "f32")},
  };
}

Json forward_walk_mask_types(int64_t bq, int64_t bkv, int64_t bkvc) {
  return Json{
      {"mask_memref", memref_type({1, bq, bkv}, "i32", "vmem")},
      {"mask_window", vector_type({1, bq, bkvc}, "i32")},
      {"q_ids_memref", memref_type({1, bq, kTpuLanes}, "i32", "vmem")},
      {"q_ids_window", vector_type({1, bq, kTpuLanes}, "i32")},
      {"q_ids_tile", vector_type({bq, kTpuLanes}, "i32")},
      {"kv_ids_memref", memref_type({1, kSublanes, bkv}, "i32", "vmem")},
      {"kv_ids_window", vector_type({1, 1, bkvc}, "i32")},
  };
}

std::vector<TpuOperand> tpu_forward_walk_inputs(const Spec& spec, int64_t block_q, int64_t block_kv,
                                                const SplashPlan& plan) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  std::vector<TpuOperand> operands = tpu_plan_and_qkv(spec, block_q, block_kv, plan);
  if (spec.segment_ids) {
    // Lane- and sublane-replicated like Splash's, so no in-kernel relayout is needed.
    operands.push_back({"q_segment_ids", Role::kInput, "i32", {s.batch, s.q_len, kTpuLanes}, {1, block_q, kTpuLanes}, "vmem"});
    operands.push_back({"kv_segment_ids", Role::kInput, "i32", {s.batch, kSublanes, s.kv_len}, {1, kSublanes, block_kv}, "vmem"});
  }
  if (spec.sinks) operands.push_back({"sinks", Role::kInput, "f32", {kSublanes, s.q_heads}, {kSublanes, s.q_heads}, "smem"});
  if (plan.has_mask_next) {
    const int64_t count = static_cast<int64_t>(plan.partial_blocks.size());
    operands.push_back({"partial_mask_blocks", Role::kInput, "i32", {count, block_q, block_kv}, {1, block_q, block_kv}, "vmem"});
  }
  return operands;
}

Json step_copies(const SplashPlan& plan, Json partial_copy, Json full_copy) {
  const auto& tiles = plan.block_mask.values;
  const bool partial = std::find(tiles.begin(), tiles.end(), kPartialTile) != tiles.end();
  const bool full = std::find(tiles.begin(), tiles.end(), kFullTile) != tiles.end();
  return Json{{"branch", partial && full},
              {"partial_path", partial ? Json::array({std::move(partial_copy)}) : Json::array()},
              {"full_path", full ? Json::array({std::move(full_copy)}) : Json::array()}};
}

std::vector<TpuOperand> document_range_operands(const Spec& spec) {
  if (!spec.segment_ids) return {};
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const TpuTarget& tpu = *spec.tpu;
  // [batch][2][blocks], not [blocks][2]: SMEM pads each table's last dimension, and a last
  // dimension of 2 would take 64 times the words.
  const TileShape tiles{s.q_len, s.kv_len, tpu.block_q, tpu.block_kv};
  return {{"q_block_ranges", Role::kScalarPrefetch, "i32", {s.batch, 2, tiles.q_blocks()}, {}, "smem"},
          {"kv_block_ranges", Role::kScalarPrefetch, "i32", {s.batch, 2, tiles.kv_blocks()}, {}, "smem"}};
}

std::vector<TpuOperand> tpu_operands(const Spec& spec, const SplashPlan& plan) {
  using Role = TpuOperand::Role;
  const Shape& s = spec.shape;
  const TpuTarget& tpu = *spec.tpu;
  const std::string t = std::string(dtype_info(spec.dtype).mlir_type);
  std::vector<TpuOperand> operands = tpu_forward_walk_inputs(spec, tpu.block_q, tpu.block_kv, plan);
  // The range tables follow the plan's: scalar-prefetch operands come first.
  const auto first_input = std::find_if(operands.begin(), operands.end(),
                                        [](const TpuOperand& op) { return op.role != Role::kScalarPrefetch; });
  const std::vector<TpuOperand> ranges = document_range_operands(spec);
  operands.insert(first_input, ranges.begin(), ranges.end());
  operands.push_back({"out", Role::kOutput, t, {s.batch, s.q_heads, s.q_len, s.head_dim_v}, {1, 1, tpu.block_q, s.head_dim_v}, "vmem"});
  if (spec.lse) operands.push_back({"lse", Role::kOutput, "f32", {s.batch, s.q_heads, s.q_len, kTpuLanes}, {1, 1, tpu.block_q, kTpuLanes}, "vmem"});
  operands.push_back({"m_scratch", Role::kScratch, "f32", {tpu.block_q, kTpuLanes}, {}, "vmem"});
  operands.push_back({"l_scratch", Role::kScratch, "f32", {tpu.block_q, kTpuLanes}, {}, "vmem"});
  operands.push_back({"acc_scratch", Role::kScratch, "f32", {tpu.block_q, s.head_dim_v}, {}, "vmem"});
  return operands;
}

KernelPlan plan_tpu_kernel(const Spec& spec) {
  const SplashPlan plan = tpu_splash_plan(spec);
  const TpuTarget& tpu = *spec.tpu;
  const Shape& s = spec.shape;
  const std::string t = std::string(dtype_info(spec.dtype).mlir_type);
  const int64_t bq = tpu.block_q, bkv = tpu.block_kv, bkvc = tpu.block_kv_compute;
  const std::vector<TpuOperand> operands = tpu_operands(spec, plan);

  // Kernel arguments: the grid indices, then every operand as its block-shaped memref.
  const TpuSignature sig = tpu_signature({"b_index", "h_index", "q_block", "kv_step"}, operands, forward_walk_window);

  const bool predicate = plan.partial_mask == PartialTileMask::kPredicate;
  const bool narrow = spec.dtype != DType::kFloat32;

  const std::string s_f32 = vector_type({bq, bkvc}, "f32");
  Json context = {
      {"symbol", kernel_symbol(spec.name, "tpu")},
      {"kernel_args", sig.kernel_args},
      {"grid", join_dims({s.batch, s.q_heads, plan.block_mask.q_blocks, plan.width()}, ", ")},
      {"scalar_prefetch", std::count_if(operands.begin(), operands.end(), [](const TpuOperand& op) {
         return op.role == TpuOperand::Role::kScalarPrefetch;
       })},
      {"windows", windows_context(sig.windows, forward_walk_window_kinds())},
      {"prefetch_params", sig.prefetch_params},
      {"mask_value", f32_literal(tpu_mask_value())},
      {"plan_per_head", plan.block_mask.rows != 1},
      {"plan_type", memref_type({plan.block_mask.rows, plan.block_mask.q_blocks, plan.width()}, "i32", "smem")},
      {"group", s.group()},
      {"block_q", bq},
      {"block_kv", bkv},
      {"last_step", plan.width() - 1},
      {"log2e", f32_literal(std::numbers::log2e)},
      {"ln2", f32_literal(std::numbers::ln2)},
      {"predicate_mask", predicate},
      {"partial_blocks", plan.has_mask_next},
      {"document_skip", spec.segment_ids},
      {"selects_scores", plan.partial_mask != PartialTileMask::kNone || spec.segment_ids},
      // m, alpha and 1/l are lane-replicated (block_q, 128): how they reach the score tile's
      // block_kv_compute lanes (a multiple of 128) and the acc's head_dim_v lanes.
      {"s_repeat", bkvc > kTpuLanes},
      {"s_repeat_times", bkvc / kTpuLanes},
      {"acc_lanes_same", s.head_dim_v == kTpuLanes},
      {"acc_lanes_repeat", s.head_dim_v > kTpuLanes && s.head_dim_v % kTpuLanes == 0},
      {"acc_repeat", s.head_dim_v / kTpuLanes},
      {"acc_lanes_slice", s.head_dim_v < kTpuLanes},
      {"acc_lanes_broadcast", s.head_dim_v > kTpuLanes && s.head_dim_v % kTpuLanes != 0},
      {"head_dim_v", s.head_dim_v},
      {"sinks", spec.sinks},
      {"sinks_type", memref_type({kSublanes, s.q_heads}, "f32", "smem")},
      {"narrow_p", narrow},
      {"p_type", vector_type({bq, bkvc}, t)},
      {"s_elem", vector_type({bq, bkvc}, t)},
      {"narrow_out", narrow},
      {"lse", spec.lse},
      // Types, all derived from the block sizes.
      {"s_f32", s_f32},
      {"s_i32", vector_type({bq, bkvc}, "i32")},
      {"s_i1", vector_type({bq, bkvc}, "i1")},
      {"row_f32", vector_type({bq}, "f32")},
      {"col_f32", vector_type({bq, 1}, "f32")},
      {"row_i32", vector_type({1, bkvc}, "i32")},
      {"lanes_f32", vector_type({bq, kTpuLanes}, "f32")},
      {"lanes_i1", vector_type({bq, kTpuLanes}, "i1")},
      {"lanes_memref", memref_type({bq, kTpuLanes}, "f32", "vmem")},
      {"acc_f32", vector_type({bq, s.head_dim_v}, "f32")},
      {"acc_memref", memref_type({bq, s.head_dim_v}, "f32", "vmem")},
  };
  // The kv block's sub-tiles (tpu/forward/subtiles.mlir.tmpl) in a partial and a full copy:
  // `softmax_input` names the last mask stage's scores, which the softmax reads;
  // `segment_input` the scores segment ids mask.
  // One p·v per group of sub-tiles (softmax.mlir.tmpl) where libtpu's bundles per step say it
  // pays (bench/tpu_static_cost.py, v5e 512/512/256): on a full step without softcap, as
  // tpu_causal_4k_v5e's 1,270 -> 1,221. With a softcap the EUP also runs the tanh, and the
  // first sub-tile's p·v has to start while the second's exponentials run (tpu_softcap_4k_v5e
  // 1,331 -> 1,365 with one product); a partial step's mask work does the same (causal's
  // partial step 1,306 -> 1,349).
  const bool one_product_full = !spec.softcap.has_value();
  // With segment ids, each in two versions (docs/block-plan.md, "Tiles skipped across
  // documents"): one that compares the ids, and one for steps inside one document, which
  // leaves the comparison (and its select) out.
  const auto copies = [&](bool compare_ids) {
    return step_copies(plan,
                       Json{{"mask_tile", true},
                            {"stages", subtile_stages(spec, /*mask_ops=*/predicate, /*one_product=*/false)},
                            {"segment_ids", compare_ids},
                            {"segment_input", "s_masked"},
                            {"softmax_input", compare_ids ? "s_segmented" : "s_masked"}},
                       Json{{"mask_tile", false},
                            {"stages", subtile_stages(spec, /*mask_ops=*/false, one_product_full)},
                            {"segment_ids", compare_ids},
                            {"segment_input", "logits"},
                            {"softmax_input", compare_ids ? "s_segmented" : "logits"}});
  };
  // The template writes the variants in order, the first opening `scf.if %one_document`, the
  // second its else.
  const auto variant = [&](bool opens_one_document, bool opens_comparing, bool compare_ids) {
    Json json = copies(compare_ids);
    json["opens_one_document"] = opens_one_document;
    json["opens_comparing"] = opens_comparing;
    return json;
  };
  if (spec.segment_ids) {
    // The range tables' types, from the operands tpu_operands placed.
    const auto ranges_type = [&](const std::string& name) {
      const auto table = std::find_if(operands.begin(), operands.end(),
                                      [&](const TpuOperand& op) { return op.name == name; });
      return memref_type(table->shape, "i32", "smem");
    };
    context["q_ranges_type"] = ranges_type("q_block_ranges");
    context["kv_ranges_type"] = ranges_type("kv_block_ranges");
    context["step_variants"] = Json::array({variant(true, false, false), variant(false, true, true)});
  } else {
    context["step_variants"] = Json::array({variant(false, false, false)});
  }
  context.update(base2_logit_constants(spec));
  context.update(tpu_tile_types(spec, bq, bkv, bkvc));
  context.update(forward_walk_mask_types(bq, bkv, bkvc));
  const std::string symbol = kernel_symbol(spec.name, "tpu");
  return KernelPlan{"tpu", "mlir", "tpu/forward/kernel.mlir.tmpl", symbol, std::move(context),
                    tpu_operands_json(symbol, {s.batch, s.q_heads, plan.block_mask.q_blocks, plan.width()},
                                      {"parallel", "parallel", "arbitrary", "arbitrary"}, operands)};
}

}  // namespace kgen
