#include "tpu_arrays.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "dtype_rounding.h"

namespace kgen {
namespace {

using mosaic::HostArray;

uint16_t narrow_bits(double value, DType dtype) {
  return dtype == DType::kBFloat16 ? bfloat16_bits(value) : float16_bits(value);
}

template <typename T>
void put(HostArray& array, std::size_t index, T value) {
  std::memcpy(array.bytes.data() + index * sizeof(T), &value, sizeof(T));
}

std::vector<int32_t> table(const auto& values) { return std::vector<int32_t>(values.begin(), values.end()); }

// ids [B, L] into a lane-replicated [B, L, 128] or a sublane-replicated row [B, 8, L] array.
void spread_ids(HostArray& array, const std::vector<int32_t>& ids, int64_t batch, int64_t length) {
  const std::vector<int64_t>& shape = array.shape;
  const bool lanes = shape[1] == length;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < length; ++i)
      for (int64_t copy = 0; copy < (lanes ? shape[2] : shape[1]); ++copy) {
        const int64_t flat = lanes ? (b * length + i) * shape[2] + copy : (b * shape[1] + copy) * length + i;
        put(array, static_cast<std::size_t>(flat), ids[static_cast<std::size_t>(b * length + i)]);
      }
}

}  // namespace

double widen(const HostArray& array, std::size_t index, DType dtype) {
  if (array.dtype == mosaic::DType::kF32) {
    float value;
    std::memcpy(&value, array.bytes.data() + index * 4, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, array.bytes.data() + index * 2, 2);
  return dtype == DType::kBFloat16 ? from_bfloat16_bits(bits) : from_float16_bits(bits);
}

HostArray element_array(const TpuOperand& op, const std::vector<double>& values, DType dtype) {
  HostArray array(op.shape, mosaic::dtype_from_name(op.element_type));
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (array.dtype == mosaic::DType::kF32)
      put(array, k, static_cast<float>(values[k]));
    else
      put(array, k, narrow_bits(values[k], dtype));
  }
  return array;
}

HostArray poisoned(const TpuOperand& op) {
  HostArray array(op.shape, mosaic::dtype_from_name(op.element_type));
  std::fill(array.bytes.begin(), array.bytes.end(), std::byte{0xFF});
  return array;
}

HostArray input_array(const TpuOperand& op, const Spec& spec, const AttentionInputs& in, const SplashPlan& plan) {
  const Shape& s = spec.shape;
  if (op.name == "q") return element_array(op, in.q, spec.dtype);
  if (op.name == "k") return element_array(op, in.k, spec.dtype);
  if (op.name == "v") return element_array(op, in.v, spec.dtype);
  HostArray array(op.shape, mosaic::dtype_from_name(op.element_type));
  if (op.name == "q_segment_ids") {
    spread_ids(array, in.q_segment_ids, s.batch, s.q_len);
  } else if (op.name == "kv_segment_ids") {
    spread_ids(array, in.kv_segment_ids, s.batch, s.kv_len);
  } else if (op.name == "sinks") {  // [H] -> [8, H]
    for (int64_t sub = 0; sub < op.shape[0]; ++sub)
      for (int64_t h = 0; h < s.q_heads; ++h) put(array, static_cast<std::size_t>(sub * s.q_heads + h), in.sinks[static_cast<std::size_t>(h)]);
  } else if (op.name == "partial_mask_blocks") {
    std::size_t k = 0;
    for (const PartialBlock& block : plan.partial_blocks)
      for (const std::string& row : block)
        for (char bit : row) put(array, k++, int32_t{bit == '1'});
  } else {
    throw std::runtime_error("the verifier has no data for kernel input '" + op.name + "'");
  }
  return array;
}

SpreadRows spread_rows(int64_t length, int64_t block, int64_t spread) {
  SpreadRows spread_out;
  for (int64_t first = 0; first < length; first += block)
    for (int64_t offset : {int64_t{0}, int64_t{1}, block / 2, block - 2, block - 1})
      spread_out.rows.insert(first + std::clamp<int64_t>(offset, 0, block - 1));
  spread_out.stride = std::max<int64_t>(1, length / spread) | 1;
  for (int64_t i = 0; i < length; i += spread_out.stride) spread_out.rows.insert(i);
  return spread_out;
}

std::vector<std::vector<int32_t>> prefetch_tables(const SplashPlan& plan) {
  std::vector<std::vector<int32_t>> tables = {table(plan.data_next.values), table(plan.block_mask.values)};
  if (plan.has_mask_next) tables.push_back(table(plan.mask_next.values));
  return tables;
}

}  // namespace kgen
