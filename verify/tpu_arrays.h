// The host arrays a tpu verification hands a Mosaic kernel: each operand's full array built
// from reference-order values, poisoned outputs, and values read back as doubles. Shared by
// the forward's and the backward's verification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "block_plan.h"
#include "dense_reference.h"
#include "document_skips.h"
#include "mosaic_kernel.h"
#include "spec.h"
#include "targets/tpu/mosaic_text.h"

namespace kgen {

// Element `index` of `array` (f32, or `dtype` when 16-bit) as a double.
double widen(const mosaic::HostArray& array, std::size_t index, DType dtype);

// The operand's array from reference-order doubles already rounded to `dtype`.
mosaic::HostArray element_array(const TpuOperand& op, const std::vector<double>& values, DType dtype);

// NaN in every element, so a row the kernel never writes cannot pass.
mosaic::HostArray poisoned(const TpuOperand& op);

// A forward input of the kernel: q, k, v, segment ids in the layout the operand's shape says
// (lane-replicated [B, L, 128] or a row [B, 8, L]), sinks [8, H], and the plan's partial
// mask blocks. Throws std::runtime_error for any other operand.
mosaic::HostArray input_array(const TpuOperand& op, const Spec& spec, const AttentionInputs& in, const SplashPlan& plan);

// The rows a sampled verification compares along a sequence of `length` cut in blocks of
// `block`: both edges and the middle of every block, where masks change, and about `spread`
// rows evenly in between (every `stride`th, an odd stride, so in-block offsets vary).
struct SpreadRows {
  std::set<int64_t> rows;
  int64_t stride = 1;
};
SpreadRows spread_rows(int64_t length, int64_t block, int64_t spread);

// Each scalar-prefetch table of `plan` as int32: data_next, block_mask, then mask_next if any.
std::vector<std::vector<int32_t>> prefetch_tables(const SplashPlan& plan);

// A document range table of the tpu forward (document_range_operands): `ids` [batch][length]
// cut in blocks of `block`, each reduced by document_skips.h's block_ranges, laid out
// [batch][2][blocks] (row 0 the minima, row 1 the maxima).
std::vector<int32_t> block_range_rows(const std::vector<int32_t>& ids, int64_t batch, int64_t length, int64_t block);

// Every scalar-prefetch table of the tpu forward kernel: prefetch_tables(plan), then, when the
// spec has segment ids, q_block_ranges and kv_block_ranges from the inputs' ids.
std::vector<std::vector<int32_t>> forward_prefetch_tables(const Spec& spec, const SplashPlan& plan,
                                                          const AttentionInputs& in);

// The forward's kept grid steps of the (batch, head) pairs `sampled` accepts, as the kernel
// classifies them with `tables` (forward_prefetch_tables): every step the plan keeps is
// planned; with segment ids, document_step on the step's q and kv block ranges says which are
// dead (the kernel skips them) and which lie inside one document (no id comparison).
DocumentStepCounts forward_document_steps(const Spec& spec, const SplashPlan& plan,
                                          const std::vector<std::vector<int32_t>>& tables,
                                          const std::function<bool(int64_t b, int64_t h)>& sampled);

}  // namespace kgen
