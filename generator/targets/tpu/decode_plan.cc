#include "targets/tpu/decode_plan.h"

#include <numbers>

#include "kernel_names.h"
#include "targets/decode_rules.h"
#include "targets/tpu/generations.h"
#include "targets/tpu/kernel_plan.h"

namespace kgen {
namespace {

using Role = TpuOperand::Role;

// The left reach of a local window; nothing for a causal mask (or a window unbounded on the left).
std::optional<int64_t> window_left(const Spec& spec) {
  const Mask& mask = spec.masks.unique.front();
  return mask.kind == Mask::Kind::kLocal ? mask.left : std::nullopt;
}

std::string element_type(const Spec& spec) { return dtype_info(spec.dtype).mlir_type; }

// k or v (`name`, rows of width `d`) as the kernel sees it: the whole cache or pool, which it
// copies from by hand.
TpuOperand cache_operand(const Spec& spec, const TpuDecodeShape& shape, const std::string& name, int64_t d) {
  const Shape& s = spec.shape;
  const std::vector<int64_t> full = shape.page_size
                                        ? std::vector<int64_t>{s.kv_heads, spec.decode->pages, shape.page_size, d}
                                        : std::vector<int64_t>{s.batch, s.kv_heads, s.kv_len, d};
  return {name, Role::kInput, element_type(spec), full, {}, "any"};
}

// Which index map a window of the split kernel has (kernel.mlir.tmpl's `windows`); k and v
// have none.
const std::vector<std::string>& decode_window_kinds() {
  static const std::vector<std::string> kinds = {"by_sequence", "by_split", "by_kv_head", "unwindowed"};
  return kinds;
}

TpuWindow decode_window(const TpuOperand& op) {
  const std::string kind = op.memory_space == "any"                   ? "unwindowed"
                           : op.name == "sinks"                        ? "by_kv_head"
                           : op.name == "out_s" || op.name == "lse_s" ? "by_split"
                                                                      : "by_sequence";
  return TpuWindow{op.name, kind, op.block, false, false};
}

// The DMAs of one block at one place of the kernel (`site`: first, next, wait_k, wait_v): the
// block's pieces (its pages, or the block itself), each copied for `names` (k, v or both)
// into buffer `slot`, started or waited for.
// The program whose block is copied: its sequence (as an i32 and as an index) and kv head.
struct ProgramNames {
  std::string b_index = "b_index", b_idx = "b_idx", kv_head = "kv_head";
};

Json dma_site(const Spec& spec, const TpuDecodeShape& shape, const std::string& site, const std::string& block,
              const std::string& slot, bool start, const std::vector<std::string>& names,
              const ProgramNames& program = {}) {
  const Shape& s = spec.shape;
  const std::string t = element_type(spec);
  const int64_t pieces = shape.dmas_per_block();
  const int64_t piece_rows = shape.pages_per_block ? shape.page_size : shape.block_kv;
  Json list = Json::array();
  for (int64_t piece = 0; piece < pieces; ++piece) {
    const std::string tag = site + (pieces > 1 ? "_" + std::to_string(piece) : "");
    const bool whole_pages = shape.pages_per_block > 0;
    std::string logical = block;
    if (whole_pages && shape.pages_per_block > 1) logical = piece == 0 ? "block_page_" + site : "logical_page_" + tag;
    if (shape.blocks_per_page) logical = "logical_page_" + tag;
    Json copies = Json::array();
    for (const std::string& name : names) {
      const int64_t d = name == "k" ? s.head_dim : s.head_dim_v;
      const std::vector<int64_t> pool = shape.page_size
                                            ? std::vector<int64_t>{s.kv_heads, spec.decode->pages, shape.page_size, d}
                                            : std::vector<int64_t>{s.batch, s.kv_heads, s.kv_len, d};
      const std::string b = "%" + program.b_index, g = "%" + program.kv_head;
      const std::string source_indices = !shape.page_size ? b + ", " + g + ", %row_first_" + tag + ", %c0_i32"
                                         : whole_pages    ? g + ", %page_" + tag + ", %c0_i32, %c0_i32"
                                                          : g + ", %page_" + tag + ", %part_row_" + tag + ", %c0_i32";
      copies.push_back({{"name", name},
                        {"source_indices", source_indices},
                        {"pool_memref", memref_type(pool, t, "any")},
                        {"source_slice", memref_type({1, 1, piece_rows, d}, t, "any")},
                        {"source_piece", memref_type({piece_rows, d}, t, "any")},
                        {"piece_memref", memref_type({piece_rows, d}, t, "vmem")},
                        {"buf_memref", memref_type({2, shape.block_kv, d}, t, "vmem")},
                        {"target_slice", memref_type({1, piece_rows, d}, t, "vmem")},
                        {"target_row", piece > 0 ? "%c_row_" + tag : "%c0_i32"}});
    }
    list.push_back({{"tag", tag},
                    {"what", pieces > 1                ? "Page " + std::to_string(piece) + " of the block's " + std::to_string(pieces)
                             : shape.blocks_per_page     ? std::string("The block, part of one page")
                             : shape.pages_per_block == 1 ? std::string("The block, one page")
                                                          : std::string("The block")},
                    {"reads_page", shape.page_size > 0},
                    {"multi_page", whole_pages && shape.pages_per_block > 1 && piece == 0},
                    {"page_offset", whole_pages && piece > 0},
                    {"page_in_block", piece},
                    {"page_part", shape.blocks_per_page > 0},
                    {"page_in_table", shape.blocks_per_page ? "block / " + std::to_string(shape.blocks_per_page)
                                      : shape.pages_per_block > 1 ? "block * " + std::to_string(shape.pages_per_block) +
                                                                       " + " + std::to_string(piece)
                                                                  : std::string("block")},
                    {"logical_page", logical},
                    {"row_offset", piece > 0},
                    {"row", piece * piece_rows},
                    {"copies", copies}});
  }
  return Json::array({Json{{"pieces", list}, {"site", site}, {"block", block}, {"slot", slot}, {"start", start},
                           {"b_idx", program.b_idx},
                           {"sems_memref", memref_type({2}, kDmaSemaphoreType, "semaphore_mem")},
                           {"sem_slice", memref_type({1}, kDmaSemaphoreType, "semaphore_mem")},
                           {"sem_memref", memref_type({}, kDmaSemaphoreType, "semaphore_mem")}}});
}

// What a path of the kernel (full blocks, or partial ones that evaluate the mask) runs per kv
// block: every sub-tile's scores, then one online-softmax update and the P·V products.
Json decode_path(const TpuDecodeShape& shape, bool mask_tile) {
  Json subtiles = Json::array();
  for (int64_t sub = 0; sub < shape.subtiles; ++sub) {
    const std::string id = std::to_string(sub);
    Json item = {{"sub", sub},
                 {"kv_offset", sub * shape.block_kv_compute},
                 {"kv_end", (sub + 1) * shape.block_kv_compute},
                 {"first", sub == 0},
                 {"second", sub == 1},
                 {"later", sub > 1},
                 {"block_start", sub == 0},
                 {"v_first", sub == 0 ? "block_first" : "kv_first_" + id},
                 {"pv_value", (mask_tile ? "v_guarded_" : "v_") + id}};
    if (sub > 0) item["prev"] = sub - 1;
    subtiles.push_back(std::move(item));
  }
  return Json::array({Json{{"mask_tile", mask_tile},
                           {"subtiles", subtiles},
                           {"softmax_input", mask_tile ? "s_masked" : "logits"},
                           {"single", shape.subtiles == 1},
                           {"last_sub", shape.subtiles - 1}}});
}

// The keys both kernels use to bring lane-replicated (rows, 128) values onto head_dim_v lanes.
Json acc_lanes(const Spec& spec) {
  const int64_t dv = spec.shape.head_dim_v;
  return Json{{"acc_lanes_same", dv == kTpuLanes},
              {"acc_lanes_repeat", dv > kTpuLanes && dv % kTpuLanes == 0},
              {"acc_repeat", dv / kTpuLanes},
              {"acc_lanes_slice", dv < kTpuLanes},
              {"acc_lanes_broadcast", dv > kTpuLanes && dv % kTpuLanes != 0},
              {"head_dim_v", dv}};
}

// The kernel's windows; k and v have none (window_params {}).
Json decode_windows(const std::vector<TpuWindow>& windows) {
  Json list = windows_context(windows, decode_window_kinds());
  for (Json& item : list) {
    item.erase("reads_plan");
    item.erase("synchronous");
  }
  return list;
}

// The combine's windows: its block index maps, none synchronous.
Json combine_windows(const std::vector<TpuWindow>& windows) {
  Json list = windows_context(windows, {"by_sequence", "by_splits", "by_kv_head"});
  for (Json& item : list) {
    item.erase("reads_plan");
    item.erase("synchronous");
  }
  return list;
}

}  // namespace

std::vector<int64_t> TpuDecodeShape::grid() const { return {batch, kv_heads, splits}; }

TpuDecodeShape tpu_decode_shape(const Spec& spec, int64_t splits) {
  const TpuTarget& tpu = *spec.tpu;
  TpuDecodeShape shape;
  shape.rows = decode_rows(spec);
  shape.block_kv = tpu.block_kv;
  shape.block_kv_compute = tpu.block_kv_compute;
  shape.subtiles = tpu.block_kv / tpu.block_kv_compute;
  shape.splits = splits;
  shape.kv_blocks = decode_kv_blocks(spec, tpu.block_kv);
  shape.steps = (shape.kv_blocks + splits - 1) / splits;
  shape.batch = spec.shape.batch;
  shape.kv_heads = spec.shape.kv_heads;
  shape.cross_program = find_tpu_generation(tpu.generation)->kernel_cores == 1;
  if (spec.decode->paged()) {
    shape.page_size = spec.decode->page_size;
    if (tpu.block_kv >= shape.page_size)
      shape.pages_per_block = tpu.block_kv / shape.page_size;
    else
      shape.blocks_per_page = shape.page_size / tpu.block_kv;
  }
  return shape;
}

std::vector<TpuOperand> tpu_decode_operands(const Spec& spec, const TpuDecodeShape& shape) {
  const Shape& s = spec.shape;
  const std::string t = element_type(spec);
  const int64_t rows = shape.rows;
  std::vector<TpuOperand> operands = {{"kv_lens", Role::kScalarPrefetch, "i32", {s.batch}, {}, "smem"}};
  if (shape.page_size)
    operands.push_back({"page_table", Role::kScalarPrefetch, "i32", {s.batch, s.kv_len / shape.page_size}, {}, "smem"});
  operands.push_back({"q", Role::kInput, t, {s.batch, s.kv_heads, rows, s.head_dim}, {1, 1, rows, s.head_dim}, "vmem"});
  operands.push_back(cache_operand(spec, shape, "k", s.head_dim));
  operands.push_back(cache_operand(spec, shape, "v", s.head_dim_v));
  if (shape.splits == 1) {
    if (spec.sinks)
      operands.push_back({"sinks", Role::kInput, "f32", {s.kv_heads, rows, kTpuLanes}, {1, rows, kTpuLanes}, "vmem"});
    operands.push_back({"out", Role::kOutput, t, {s.batch, s.kv_heads, rows, s.head_dim_v}, {1, 1, rows, s.head_dim_v}, "vmem"});
    if (spec.lse)
      operands.push_back({"lse", Role::kOutput, "f32", {s.batch, s.kv_heads, rows, kTpuLanes}, {1, 1, rows, kTpuLanes}, "vmem"});
  } else {
    operands.push_back({"out_s", Role::kOutput, "f32", {s.batch, s.kv_heads, shape.splits, rows, s.head_dim_v},
                        {1, 1, 1, rows, s.head_dim_v}, "vmem"});
    operands.push_back({"lse_s", Role::kOutput, "f32", {s.batch, s.kv_heads, shape.splits, rows, kTpuLanes},
                        {1, 1, 1, rows, kTpuLanes}, "vmem"});
  }
  // Two buffers per cache array: one is computed on while the next block lands in the other.
  operands.push_back({"k_buf", Role::kScratch, t, {2, shape.block_kv, s.head_dim}, {}, "vmem"});
  operands.push_back({"v_buf", Role::kScratch, t, {2, shape.block_kv, s.head_dim_v}, {}, "vmem"});
  operands.push_back({"k_sems", Role::kScratch, kDmaSemaphoreType, {2}, {}, "semaphore_mem"});
  operands.push_back({"v_sems", Role::kScratch, kDmaSemaphoreType, {2}, {}, "semaphore_mem"});
  // Which buffer the next program's first block goes to, and whether its copies were started.
  if (shape.cross_program) operands.push_back({"dma_state", Role::kScratch, "i32", {2}, {}, "smem"});
  operands.push_back({"m_scratch", Role::kScratch, "f32", {rows, kTpuLanes}, {}, "vmem"});
  operands.push_back({"l_scratch", Role::kScratch, "f32", {rows, kTpuLanes}, {}, "vmem"});
  operands.push_back({"acc_scratch", Role::kScratch, "f32", {rows, s.head_dim_v}, {}, "vmem"});
  return operands;
}

std::vector<TpuOperand> tpu_combine_operands(const Spec& spec, const TpuDecodeShape& shape) {
  const Shape& s = spec.shape;
  const int64_t rows = shape.rows, splits = shape.splits;
  std::vector<TpuOperand> operands = {
      {"out_s", Role::kInput, "f32", {s.batch, s.kv_heads, splits, rows, s.head_dim_v}, {1, 1, splits, rows, s.head_dim_v}, "vmem"},
      {"lse_s", Role::kInput, "f32", {s.batch, s.kv_heads, splits, rows, kTpuLanes}, {1, 1, splits, rows, kTpuLanes}, "vmem"},
  };
  if (spec.sinks)
    operands.push_back({"sinks", Role::kInput, "f32", {s.kv_heads, rows, kTpuLanes}, {1, rows, kTpuLanes}, "vmem"});
  operands.push_back({"out", Role::kOutput, element_type(spec), {s.batch, s.kv_heads, rows, s.head_dim_v},
                      {1, 1, rows, s.head_dim_v}, "vmem"});
  if (spec.lse)
    operands.push_back({"lse", Role::kOutput, "f32", {s.batch, s.kv_heads, rows, kTpuLanes}, {1, 1, rows, kTpuLanes}, "vmem"});
  return operands;
}

KernelPlan plan_tpu_decode_kernel(const Spec& spec, int64_t splits) {
  const Shape& s = spec.shape;
  const TpuDecodeShape shape = tpu_decode_shape(spec, splits);
  const std::vector<TpuOperand> operands = tpu_decode_operands(spec, shape);
  const TpuSignature sig = tpu_signature({"b_index", "kv_head", "split"}, operands, decode_window);
  const std::string t = element_type(spec);
  const int64_t rows = shape.rows, bkvc = shape.block_kv_compute;
  const bool split = splits > 1;
  const std::optional<int64_t> left = window_left(spec);
  const std::string symbol = kernel_symbol(spec.name, "tpu");
  const std::vector<int64_t> out_block = split ? std::vector<int64_t>{1, 1, 1, rows, s.head_dim_v}
                                               : std::vector<int64_t>{1, 1, rows, s.head_dim_v};
  const std::vector<int64_t> lse_block = split ? std::vector<int64_t>{1, 1, 1, rows, kTpuLanes}
                                               : std::vector<int64_t>{1, 1, rows, kTpuLanes};
  const std::string out_element = split ? "f32" : t;
  // Programs that start each other's copies must run in grid order on one core.
  const std::string semantics = shape.cross_program ? "arbitrary" : "parallel";
  Json context = {
      {"symbol", symbol},
      {"cache_kind", shape.page_size ? "paged" : "contiguous"},
      {"paged", shape.page_size > 0},
      {"kernel_args", sig.kernel_args},
      {"grid", join_dims(shape.grid(), ", ")},
      {"scalar_prefetch", shape.page_size ? 2 : 1},
      {"windows", decode_windows(sig.windows)},
      {"dmas_per_block", shape.dmas_per_block()},
      {"multi_page", shape.pages_per_block > 1},
      {"pages_per_block", shape.pages_per_block},
      {"page_part", shape.blocks_per_page > 0},
      {"blocks_per_page", shape.blocks_per_page},
      {"cross_program", shape.cross_program},
      {"semantics", semantics},
      {"scratch_operands", shape.cross_program ? 8 : 7},
      {"own_first", shape.cross_program ? "own_first" : "any_block"},
      {"program_sum", split ? "program_bgs" : "program_bg"},
      {"dma_state_memref", memref_type({2}, "i32", "smem")},
      {"range_own", Json::array({Json{{"sfx", ""}, {"b_name", "b_index"}, {"split_name", "split"}}})},
      {"range_next", Json::array({Json{{"sfx", "_np"}, {"b_name", "b_next"}, {"split_name", "s_next"}}})},
      {"begin_np", split ? "begin_np" : "lo_np"},
      {"end_np", split ? "end_np" : "hi_np"},
      {"batch", s.batch},
      {"kv_heads", s.kv_heads},
      {"dma_first", dma_site(spec, shape, "first", split ? "begin" : "lo", shape.cross_program ? "slot_first" : "c0_i32",
                             true, {"k", "v"})},
      {"dma_next_program", dma_site(spec, shape, "next_program", split ? "begin_np" : "lo_np", "slot_np", true, {"k", "v"},
                                    ProgramNames{"b_next", "b_idx_np", "g_next"})},
      {"dma_next", dma_site(spec, shape, "next", "block_next", "slot_next", true, {"k", "v"})},
      {"dma_wait_k", dma_site(spec, shape, "wait_k", "block", "slot", false, {"k"})},
      {"dma_wait_v", dma_site(spec, shape, "wait_v", "block", "slot", false, {"v"})},
      {"prefetch_params", sig.prefetch_params},
      {"kv_lens_type", memref_type({s.batch}, "i32", "smem")},
      {"page_table_type", memref_type({s.batch, shape.page_size ? s.kv_len / shape.page_size : 1}, "i32", "smem")},
      {"mask_value", f32_literal(tpu_mask_value())},
      {"group", s.group()},
      {"q_len", s.q_len},
      {"rows", rows},
      {"block_kv", shape.block_kv},
      {"block_kv_less_1", shape.block_kv - 1},
      {"local", left.has_value()},
      // The first token (at len - q_len) reaches back `left`; the last (at len - 1) starts its
      // window at len - 1 - left.
      {"window_reach", s.q_len + left.value_or(0)},
      {"last_reach", 1 + left.value_or(0)},
      {"left", left.value_or(0)},
      {"split", split},
      {"splits", splits},
      {"begin", split ? "begin" : "lo"},
      {"end", split ? "end" : "hi"},
      {"multi_token", s.q_len > 1},
      {"sink_init", spec.sinks && !split},
      {"log2e", f32_literal(std::numbers::log2e)},
      {"ln2", f32_literal(std::numbers::ln2)},
      {"full_path", decode_path(shape, /*mask_tile=*/false)},
      {"partial_path", decode_path(shape, /*mask_tile=*/true)},
      // m and l are lane-replicated (rows, 128): repeated across a sub-tile's block_kv_compute lanes.
      {"s_repeat", bkvc > kTpuLanes},
      {"s_repeat_times", bkvc / kTpuLanes},
      {"narrow_p", spec.dtype != DType::kFloat32},
      {"p_type", vector_type({rows, bkvc}, t)},
      {"narrow_out", !split && spec.dtype != DType::kFloat32},
      {"writes_lse", split || spec.lse},
      {"out_ref", split ? "out_s_ref" : "out_ref"},
      {"lse_ref", split ? "lse_s_ref" : "lse_ref"},
      {"out_indices", split ? "%c0, %c0, %c0, %c0, %c0" : "%c0, %c0, %c0, %c0"},
      {"q_memref", memref_type({1, 1, rows, s.head_dim}, t, "vmem")},
      {"q_window", vector_type({1, 1, rows, s.head_dim}, t)},
      {"q_tile", vector_type({rows, s.head_dim}, t)},
      {"k_buf_memref", memref_type({2, shape.block_kv, s.head_dim}, t, "vmem")},
      {"k_window", vector_type({1, bkvc, s.head_dim}, t)},
      {"k_tile", vector_type({bkvc, s.head_dim}, t)},
      {"v_buf_memref", memref_type({2, shape.block_kv, s.head_dim_v}, t, "vmem")},
      {"v_window", vector_type({1, bkvc, s.head_dim_v}, t)},
      {"v_tile", vector_type({bkvc, s.head_dim_v}, t)},
      {"v_i32", vector_type({bkvc, s.head_dim_v}, "i32")},
      {"v_i1", vector_type({bkvc, s.head_dim_v}, "i1")},
      {"sinks_memref", memref_type({1, rows, kTpuLanes}, "f32", "vmem")},
      {"sinks_window", vector_type({1, rows, kTpuLanes}, "f32")},
      {"out_memref", memref_type(out_block, out_element, "vmem")},
      {"out_window", vector_type(out_block, out_element)},
      {"out_tile", vector_type({rows, s.head_dim_v}, out_element)},
      {"lse_memref", memref_type(lse_block, "f32", "vmem")},
      {"lse_window", vector_type(lse_block, "f32")},
      {"s_f32", vector_type({rows, bkvc}, "f32")},
      {"s_i32", vector_type({rows, bkvc}, "i32")},
      {"s_i1", vector_type({rows, bkvc}, "i1")},
      {"row_f32", vector_type({rows}, "f32")},
      {"col_f32", vector_type({rows, 1}, "f32")},
      {"lanes_f32", vector_type({rows, kTpuLanes}, "f32")},
      {"lanes_i1", vector_type({rows, kTpuLanes}, "i1")},
      {"lanes_memref", memref_type({rows, kTpuLanes}, "f32", "vmem")},
      {"acc_f32", vector_type({rows, s.head_dim_v}, "f32")},
      {"acc_memref", memref_type({rows, s.head_dim_v}, "f32", "vmem")},
  };
  context.update(base2_logit_constants(spec));
  context.update(acc_lanes(spec));
  return KernelPlan{"tpu", "mlir", "tpu/decode/kernel.mlir.tmpl", symbol, std::move(context),
                    tpu_operands_json(symbol, shape.grid(), std::vector<std::string>(3, semantics), operands)};
}

KernelPlan plan_tpu_decode_combine(const Spec& spec, int64_t splits) {
  const Shape& s = spec.shape;
  const TpuDecodeShape shape = tpu_decode_shape(spec, splits);
  const std::vector<TpuOperand> operands = tpu_combine_operands(spec, shape);
  const TpuSignature sig = tpu_signature({"b_index", "kv_head"}, operands, [](const TpuOperand& op) {
    const std::string kind = op.name == "sinks" ? "by_kv_head" : op.name == "out_s" || op.name == "lse_s" ? "by_splits" : "by_sequence";
    return TpuWindow{op.name, kind, op.block, false, false};
  });
  const std::string t = element_type(spec);
  const int64_t rows = shape.rows;
  const std::string symbol = kernel_symbol(spec.name, "tpu", "combine");
  Json context = {
      {"symbol", symbol},
      {"kernel_args", sig.kernel_args},
      {"grid", join_dims({s.batch, s.kv_heads}, ", ")},
      {"windows", combine_windows(sig.windows)},
      {"splits", splits},
      {"rows", rows},
      {"sinks", spec.sinks},
      {"m", spec.sinks ? "m" : "m_parts"},
      {"l", spec.sinks ? "l" : "l_parts"},
      {"lse", spec.lse},
      {"narrow_out", spec.dtype != DType::kFloat32},
      {"lse_s_memref", memref_type({1, 1, splits, rows, kTpuLanes}, "f32", "vmem")},
      {"lse_s_window", vector_type({1, 1, splits, rows, kTpuLanes}, "f32")},
      {"out_s_memref", memref_type({1, 1, splits, rows, s.head_dim_v}, "f32", "vmem")},
      {"out_s_window", vector_type({1, 1, splits, rows, s.head_dim_v}, "f32")},
      {"parts_lanes", vector_type({splits, rows, kTpuLanes}, "f32")},
      {"parts_acc", vector_type({splits, rows, s.head_dim_v}, "f32")},
      {"parts_col", vector_type({splits, rows, 1}, "f32")},
      {"one_lanes", vector_type({1, rows, kTpuLanes}, "f32")},
      {"sinks_memref", memref_type({1, rows, kTpuLanes}, "f32", "vmem")},
      {"sinks_window", vector_type({1, rows, kTpuLanes}, "f32")},
      {"lanes_f32", vector_type({rows, kTpuLanes}, "f32")},
      {"lanes_i1", vector_type({rows, kTpuLanes}, "i1")},
      {"col_f32", vector_type({rows, 1}, "f32")},
      {"acc_f32", vector_type({rows, s.head_dim_v}, "f32")},
      {"out_memref", memref_type({1, 1, rows, s.head_dim_v}, t, "vmem")},
      {"out_window", vector_type({1, 1, rows, s.head_dim_v}, t)},
      {"out_tile", vector_type({rows, s.head_dim_v}, t)},
      {"lse_memref", memref_type({1, 1, rows, kTpuLanes}, "f32", "vmem")},
      {"lse_window", vector_type({1, 1, rows, kTpuLanes}, "f32")},
  };
  context.update(acc_lanes(spec));
  KernelPlan plan{"tpu", "mlir", "tpu/decode/combine.mlir.tmpl", symbol, std::move(context),
                  tpu_operands_json(symbol, {s.batch, s.kv_heads}, {"parallel", "parallel"}, operands)};
  plan.pass = "combine";
  return plan;
}

}  // namespace kgen
