#include "targets/tpu/mosaic_text.h"

#include <cstdio>
#include <numbers>

#include "dtype.h"

namespace kgen {

std::string join_dims(const std::vector<int64_t>& dims, const char* separator) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : separator) + std::to_string(d);
  return out;
}

namespace {

// "4x128x" before the element type; nothing for a 0-d type.
std::string shape_prefix(const std::vector<int64_t>& dims) { return dims.empty() ? "" : join_dims(dims, "x") + "x"; }

}  // namespace

std::string vector_type(const std::vector<int64_t>& dims, const std::string& element) {
  return "vector<" + shape_prefix(dims) + element + ">";
}

std::string memref_type(const std::vector<int64_t>& dims, const std::string& element, const std::string& space) {
  return "memref<" + shape_prefix(dims) + element + ", #tpu.memory_space<" + space + ">>";
}

std::string f32_literal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.8e", static_cast<double>(static_cast<float>(value)));
  return buffer;
}

Json base2_logit_constants(const Spec& spec) {
  return {{"softcap", spec.softcap.has_value()},
          {"scale_log2e", f32_literal(spec.scale * std::numbers::log2e)},
          {"scale_over_cap", f32_literal(spec.scale / spec.softcap.value_or(1.0))},
          {"softcap_log2e", f32_literal(spec.softcap.value_or(1.0) * std::numbers::log2e)}};
}

Json windows_context(const std::vector<TpuWindow>& windows, const std::vector<std::string>& kinds) {
  Json list = Json::array();
  for (std::size_t k = 0; k < windows.size(); ++k) {
    const TpuWindow& w = windows[k];
    std::string index_types;
    for (std::size_t d = 0; d < w.bounds.size(); ++d) index_types += d ? ", i32" : "i32";
    Json item = {{"operand", w.operand},
                 {"index", static_cast<int64_t>(k)},
                 {"window_bounds", join_dims(w.bounds, ", ")},
                 {"synchronous", w.synchronous},
                 {"last", k + 1 == windows.size()},
                 {"index_types", index_types},
                 {"reads_plan", w.reads_plan}};
    for (const std::string& kind : kinds) item[kind] = w.kind == kind;
    list.push_back(std::move(item));
  }
  return list;
}

namespace {

// The operands file names element types as specs do; the plan's i32 tables are int32.
const char* numpy_dtype(const std::string& element_type) {
  if (element_type == kDmaSemaphoreType) return "dma_semaphore";
  const DTypeInfo* info = find_dtype_by_mlir_type(element_type);
  return info ? info->spec_name : "int32";
}

}  // namespace

Json tpu_operands_json(const std::string& symbol, const std::vector<int64_t>& grid,
                       const std::vector<std::string>& dimension_semantics, const std::vector<TpuOperand>& operands) {
  Json object = {{"kernel", symbol}, {"grid", grid}, {"dimension_semantics", dimension_semantics}};
  for (const char* list : {"scalar_prefetch", "inputs", "outputs", "scratch"}) object[list] = Json::array();
  for (const TpuOperand& op : operands) {
    Json entry = {{"name", op.name}, {"shape", op.shape}, {"dtype", numpy_dtype(op.element_type)}};
    if (!op.block.empty()) entry["block"] = op.block;
    if (op.memory_space != "vmem" && op.role != TpuOperand::Role::kScalarPrefetch) entry["memory_space"] = op.memory_space;
    const char* list = op.role == TpuOperand::Role::kScalarPrefetch ? "scalar_prefetch"
                       : op.role == TpuOperand::Role::kInput        ? "inputs"
                       : op.role == TpuOperand::Role::kOutput       ? "outputs"
                                                                    : "scratch";
    object[list].push_back(std::move(entry));
  }
  return object;
}

}  // namespace kgen
