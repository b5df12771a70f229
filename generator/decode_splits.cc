#include "decode_splits.h"

#include <algorithm>

namespace kgen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t decode_split_cost(const DecodeWork& work, int64_t splits) {
  return ceil_div(work.work_units * splits, work.parallel_units) * (ceil_div(work.kv_blocks, splits) + 1);
}

DecodeSplits decode_splits(const DecodeWork& work, std::optional<int64_t> written) {
  if (written) return DecodeSplits{*written, false};
  DecodeSplits best{1, true};
  if (work.work_units >= work.parallel_units) return best;
  const int64_t limit = std::min(work.kv_blocks, kMaxDecodeSplits);
  for (int64_t s = 2; s <= limit; ++s)
    if (decode_split_cost(work, s) < decode_split_cost(work, best.splits)) best.splits = s;
  return best;
}

BlockRange split_blocks(int64_t blocks, int64_t splits, int64_t split) {
  return BlockRange{split * blocks / splits, (split + 1) * blocks / splits};
}

}  // namespace kgen
