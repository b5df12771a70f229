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

std::vector<int32_t> block_range_rows(const std::vector<int32_t>& ids, int64_t batch, int64_t length, int64_t block) {
  const int64_t blocks = (length + block - 1) / block;
  std::vector<int32_t> rows(static_cast<std::size_t>(batch * 2 * blocks));
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<IdRange> ranges = block_ranges(ids.data() + b * length, length, block);
    for (int64_t k = 0; k < blocks; ++k) {
      rows[static_cast<std::size_t>((b * 2 + 0) * blocks + k)] = ranges[static_cast<std::size_t>(k)].min;
      rows[static_cast<std::size_t>((b * 2 + 1) * blocks + k)] = ranges[static_cast<std::size_t>(k)].max;
    }
  }
  return rows;
}

std::vector<std::vector<int32_t>> forward_prefetch_tables(const Spec& spec, const SplashPlan& plan,
                                                          const AttentionInputs& in) {
  std::vector<std::vector<int32_t>> tables = prefetch_tables(plan);
  if (spec.segment_ids) {
    const Shape& s = spec.shape;
    tables.push_back(block_range_rows(in.q_segment_ids, s.batch, s.q_len, spec.tpu->block_q));
    tables.push_back(block_range_rows(in.kv_segment_ids, s.batch, s.kv_len, spec.tpu->block_kv));
  }
  return tables;
}

DocumentStepCounts forward_document_steps(const Spec& spec, const SplashPlan& plan,
                                          const std::vector<std::vector<int32_t>>& tables,
                                          const std::function<bool(int64_t b, int64_t h)>& sampled) {
  const Shape& s = spec.shape;
  const Table3<int8_t>& tiles = plan.block_mask;
  const int64_t q_blocks = (s.q_len + spec.tpu->block_q - 1) / spec.tpu->block_q;
  const int64_t kv_blocks = (s.kv_len + spec.tpu->block_kv - 1) / spec.tpu->block_kv;
  const std::size_t ranges = tables.size() - 2;  // q_block_ranges' place, when there are ranges
  const auto range = [&](std::size_t table, int64_t b, int64_t blocks, int64_t block) {
    const std::vector<int32_t>& rows = tables[table];
    return IdRange{rows[static_cast<std::size_t>((b * 2 + 0) * blocks + block)],
                   rows[static_cast<std::size_t>((b * 2 + 1) * blocks + block)]};
  };
  DocumentStepCounts counts;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.q_heads; ++h) {
      if (!sampled(b, h)) continue;
      const int64_t row = tiles.rows == 1 ? 0 : h;
      for (int64_t qb = 0; qb < tiles.q_blocks; ++qb)
        for (int64_t step = 0; step < tiles.cols; ++step) {
          if (tiles.at(row, qb, step) == kEmptyTile) continue;
          ++counts.planned;
          if (!spec.segment_ids) continue;
          const int64_t kv_block = plan.data_next.at(row, qb, step);
          const DocumentStep kind = document_step(range(ranges, b, q_blocks, qb), range(ranges + 1, b, kv_blocks, kv_block));
          counts.dead += kind == DocumentStep::kDead;
          counts.one_document += kind == DocumentStep::kOneDocument;
        }
    }
  return counts;
}

}  // namespace kgen
