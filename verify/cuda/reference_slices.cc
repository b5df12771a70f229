#include "reference_slices.h"

#include <algorithm>

namespace kgen {
namespace {

// Copies rows [first, first + count) of `rows`-long blocks of `width` values.
template <typename T>
void append_rows(std::vector<T>& out, const std::vector<T>& in, int64_t first, int64_t count, int64_t width) {
  const auto begin = in.begin() + first * width;
  out.insert(out.end(), begin, begin + count * width);
}

}  // namespace

std::vector<SliceId> all_slices(const Spec& spec) {
  std::vector<SliceId> slices;
  for (int64_t b = 0; b < spec.shape.batch; ++b)
    for (int64_t g = 0; g < spec.shape.kv_heads; ++g) slices.push_back({b, g});
  return slices;
}

Spec slice_spec(const Spec& spec, const SliceId& id) {
  Spec slice = spec;
  const int64_t group = spec.shape.group();
  slice.shape.batch = 1;
  slice.shape.kv_heads = 1;
  slice.shape.q_heads = group;
  slice.masks.head_to_unique.assign(spec.masks.head_to_unique.begin() + id.kv_head * group,
                                    spec.masks.head_to_unique.begin() + (id.kv_head + 1) * group);
  return slice;
}

AttentionInputs slice_inputs(const Spec& spec, const AttentionInputs& in, const SliceId& id) {
  const Shape& s = spec.shape;
  const int64_t group = s.group();
  AttentionInputs out;
  // q: heads [g * group, (g + 1) * group) of batch b, each q_len rows of head_dim.
  append_rows(out.q, in.q, (id.batch * s.q_heads + id.kv_head * group) * s.q_len, group * s.q_len, s.head_dim);
  append_rows(out.k, in.k, (id.batch * s.kv_heads + id.kv_head) * s.kv_len, s.kv_len, s.head_dim);
  append_rows(out.v, in.v, (id.batch * s.kv_heads + id.kv_head) * s.kv_len, s.kv_len, s.head_dim_v);
  if (spec.segment_ids) {
    append_rows(out.q_segment_ids, in.q_segment_ids, id.batch, 1, s.q_len);
    append_rows(out.kv_segment_ids, in.kv_segment_ids, id.batch, 1, s.kv_len);
  }
  if (spec.sinks) append_rows(out.sinks, in.sinks, id.kv_head * group, group, 1);
  return out;
}

AttentionOutputs slice_outputs(const Spec& spec, const AttentionOutputs& in, const SliceId& id) {
  const Shape& s = spec.shape;
  const int64_t group = s.group();
  const int64_t first_row = (id.batch * s.q_heads + id.kv_head * group) * s.q_len;
  AttentionOutputs out;
  append_rows(out.out, in.out, first_row, group * s.q_len, s.head_dim_v);
  if (!in.lse.empty()) append_rows(out.lse, in.lse, first_row, group * s.q_len, 1);
  return out;
}

std::vector<QBlock> touched_q_blocks(const Spec& spec, int64_t rows,
                                     const std::function<bool(int64_t)>& touched) {
  const Shape& s = spec.shape;
  std::vector<QBlock> blocks;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.q_heads; ++h)
      for (int64_t first = 0; first < s.q_len; first += rows) {
        const int64_t flat = (b * s.q_heads + h) * s.q_len;
        for (int64_t i = first; i < std::min(first + rows, s.q_len); ++i)
          if (touched(flat + i)) {
            blocks.push_back({b, h, first / rows});
            break;
          }
      }
  return blocks;
}

AttentionOutputs select_slice_rows(const Spec& slice, const AttentionOutputs& in,
                                   const std::function<bool(int64_t, int64_t)>& keep) {
  const Shape& s = slice.shape;
  AttentionOutputs out;
  for (int64_t h = 0; h < s.q_heads; ++h)
    for (int64_t i = 0; i < s.q_len; ++i) {
      if (!keep(h, i)) continue;
      const int64_t row = h * s.q_len + i;
      append_rows(out.out, in.out, row, 1, s.head_dim_v);
      if (!in.lse.empty()) append_rows(out.lse, in.lse, row, 1, 1);
    }
  return out;
}

double kept_pairs(const Spec& spec, const std::vector<int32_t>& q_ids, const std::vector<int32_t>& kv_ids) {
  const Shape& s = spec.shape;
  double pairs = 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    std::vector<double> per_mask(spec.masks.unique.size(), 0.0);
    for (std::size_t u = 0; u < spec.masks.unique.size(); ++u) {
      for (int64_t i = 0; i < s.q_len; ++i) {
        for (const Interval& run : spec.masks.unique[u].row(i, s.kv_len)) {
          if (!spec.segment_ids) {
            per_mask[u] += double(run.end - run.begin);
            continue;
          }
          const int32_t id = q_ids[static_cast<std::size_t>(b * s.q_len + i)];
          for (int64_t j = run.begin; j < run.end; ++j) per_mask[u] += kv_ids[static_cast<std::size_t>(b * s.kv_len + j)] == id;
        }
      }
    }
    for (int64_t h = 0; h < s.q_heads; ++h) pairs += per_mask[static_cast<std::size_t>(spec.masks.head_to_unique[static_cast<std::size_t>(h)])];
  }
  return pairs;
}

}  // namespace kgen
