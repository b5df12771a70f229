// The host arrays a tpu verification hands a Mosaic kernel: each operand's full array built
// from reference-order values, poisoned outputs, and values read back as doubles. Shared by
// the forward's and the backward's verification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "block_plan.h"
#include "dense_reference.h"
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

}  // namespace kgen
