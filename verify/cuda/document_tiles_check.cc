#include "document_tiles_check.h"

#include "document_skips.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/tile_tables.h"

namespace kgen::sm90a {

DocumentTilesExpected expected_document_tiles(const Spec& spec, const std::string& target,
                                              const std::vector<int32_t>& q_segment_ids,
                                              const std::vector<int32_t>& kv_segment_ids) {
  const Shape& s = spec.shape;
  const GpuTarget& gpu = target == "sm100a" ? *spec.sm100a : *spec.sm90a;
  const TileShape tiles = gpu_tile_shape(spec, gpu);
  const KvBlockLists lists = build_kv_block_lists(spec.masks, s.q_heads, tiles);
  const FlatTileLists flat = flatten_tile_lists(lists.partial, lists.full);
  const int64_t list_count = static_cast<int64_t>(lists.partial.size());
  const int64_t q_blocks = tiles.q_blocks();
  const int64_t per_batch = 3 * list_count + static_cast<int64_t>(flat.entries.size());

  DocumentTilesExpected expected;
  expected.ints.assign(static_cast<std::size_t>(s.batch * per_batch), 0);
  expected.written.assign(expected.ints.size(), 0);
  auto write = [&](int64_t index, int64_t value) {
    expected.ints[static_cast<std::size_t>(index)] = static_cast<int32_t>(value);
    expected.written[static_cast<std::size_t>(index)] = 1;
  };
  for (int64_t b = 0; b < s.batch; ++b) {
    const std::vector<IdRange> q = block_ranges(q_segment_ids.data() + b * s.q_len, s.q_len, tiles.block_q);
    const std::vector<IdRange> kv = block_ranges(kv_segment_ids.data() + b * s.kv_len, s.kv_len, tiles.block_kv);
    for (int64_t list = 0; list < list_count; ++list) {
      const IdRange q_range = q[static_cast<std::size_t>(list % q_blocks)];
      const int64_t begin = flat.begin[static_cast<std::size_t>(list)];
      const int64_t partial = flat.partial_count[static_cast<std::size_t>(list)];
      const int64_t count = flat.size(static_cast<std::size_t>(list));
      auto step = [&](int64_t t) {
        return document_step(q_range, kv[static_cast<std::size_t>(flat.entries[static_cast<std::size_t>(begin + t)])]);
      };
      const int64_t entries = b * per_batch + 3 * list_count + begin;
      int64_t n = 0;
      for (int64_t t = 0; t < partial; ++t)
        if (step(t) != DocumentStep::kDead) write(entries + n++, begin + t);
      const int64_t partial_walked = n;
      for (int64_t t = partial; t < count; ++t)
        if (step(t) == DocumentStep::kCompare) write(entries + n++, begin + t);
      const int64_t compare_end = n;
      for (int64_t t = partial; t < count; ++t)
        if (step(t) == DocumentStep::kOneDocument) write(entries + n++, begin + t);
      write(b * per_batch + 3 * list, n);
      write(b * per_batch + 3 * list + 1, partial_walked);
      write(b * per_batch + 3 * list + 2, compare_end);
      // Counted per CTA: a list of a plan row shared by every head is walked by each.
      const int64_t ctas = lists.rows == 1 ? s.q_heads : 1;
      expected.counts.planned += ctas * count;
      expected.counts.walked += ctas * n;
      expected.counts.one_document += ctas * (n - compare_end);
    }
  }
  return expected;
}

std::string compare_document_tiles(const DocumentTilesExpected& expected, const std::vector<int32_t>& actual) {
  if (actual.size() != expected.ints.size())
    return "the workspace holds " + std::to_string(actual.size()) + " ints, the plan's layout " +
           std::to_string(expected.ints.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    if (expected.written[i] && actual[i] != expected.ints[i])
      return "int " + std::to_string(i) + " of the workspace is " + std::to_string(actual[i]) + ", the rule gives " +
             std::to_string(expected.ints[i]);
  return "";
}

}  // namespace kgen::sm90a
