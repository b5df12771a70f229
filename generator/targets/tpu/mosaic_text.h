// Spellings shared by the tpu target's kernel plans (forward, dq, dkv): MLIR types and
// literals, the window list the templates iterate, and the operands file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "json_fields.h"
#include "spec.h"

namespace kgen {

// The element type of a DMA semaphore (scratch of memory space semaphore_mem).
inline constexpr const char* kDmaSemaphoreType = "!tpu.dma_semaphore";

// One operand of a generated Mosaic kernel, in kernel argument order.
struct TpuOperand {
  enum class Role { kScalarPrefetch, kInput, kOutput, kScratch };
  std::string name;
  Role role;
  std::string element_type;      // MLIR spelling: bf16, f16, f32, i32
  std::vector<int64_t> shape;    // the full array (for scratch: the buffer)
  std::vector<int64_t> block;    // the window; empty for scalar prefetch and scratch
  std::string memory_space;      // smem, vmem, any (an input the kernel copies itself), semaphore_mem
};

std::string join_dims(const std::vector<int64_t>& dims, const char* separator);
std::string vector_type(const std::vector<int64_t>& dims, const std::string& element);
std::string memref_type(const std::vector<int64_t>& dims, const std::string& element, const std::string& space);
// Nine significant digits: round-trips any float32, and always an MLIR float literal.
std::string f32_literal(double value);

// Every tpu kernel keeps logits in base 2: the scale (with log2 e, and 1 / softcap before the
// tanh) is one constant per multiply and exp2 needs none of its own. The template variables
// softcap, scale_log2e, scale_over_cap and softcap_log2e.
Json base2_logit_constants(const Spec& spec);

// One windowed operand: `kind` names the index map its template writes for it (one of the
// template's window kinds); `reads_plan` when that map loads the scalar-prefetched plan.
struct TpuWindow {
  std::string operand;
  std::string kind;
  std::vector<int64_t> bounds;
  bool synchronous = false;
  bool reads_plan = false;
};

// The `windows` list of a template: each window with its index, bounds, `last`, and a flag
// per kind in `kinds` saying which index map is its own.
Json windows_context(const std::vector<TpuWindow>& windows, const std::vector<std::string>& kinds);

// The kernel arguments of a template (`grid_indices` then every operand as its block-shaped
// memref, inputs and outputs named <name>_ref), the windows (kind from `window_kind`) and
// the scalar-prefetch parameters every index map takes.
struct TpuSignature {
  Json kernel_args;
  std::vector<TpuWindow> windows;
  std::string prefetch_params;
};
template <typename WindowKind>
TpuSignature tpu_signature(const std::vector<std::string>& grid_indices, const std::vector<TpuOperand>& operands,
                           WindowKind window_kind);

// The <name>.tpu[.<pass>].operands.json object: the kernel, its grid, and every operand.
Json tpu_operands_json(const std::string& symbol, const std::vector<int64_t>& grid,
                       const std::vector<std::string>& dimension_semantics, const std::vector<TpuOperand>& operands);

// ---- implementation of the template

template <typename WindowKind>
TpuSignature tpu_signature(const std::vector<std::string>& grid_indices, const std::vector<TpuOperand>& operands,
                           WindowKind window_kind) {
  TpuSignature sig;
  sig.kernel_args = Json::array();
  for (const std::string& index : grid_indices) sig.kernel_args.push_back({{"name", index}, {"type", "i32"}});
  for (const TpuOperand& op : operands) {
    const bool windowed = op.role == TpuOperand::Role::kInput || op.role == TpuOperand::Role::kOutput;
    // SMEM inputs and memory-space-any inputs (copied by the kernel itself) are whole arrays.
    const bool whole = !windowed || op.memory_space == "smem" || op.memory_space == "any";
    const std::string type = memref_type(whole ? op.shape : op.block, op.element_type, op.memory_space);
    sig.kernel_args.push_back({{"name", windowed ? op.name + "_ref" : op.name}, {"type", type}});
    if (op.role == TpuOperand::Role::kScalarPrefetch)
      sig.prefetch_params += (sig.prefetch_params.empty() ? "%" : ", %") + op.name + ": " + type;
    if (windowed) sig.windows.push_back(window_kind(op));
  }
  for (std::size_t k = 0; k < sig.kernel_args.size(); ++k) sig.kernel_args[k]["last"] = k + 1 == sig.kernel_args.size();
  return sig;
}

}  // namespace kgen
