// What one CTA of a CUDA decode kernel computes (docs/decode.md, "The walk" and "Splits"): the
// kv blocks of its split of one sequence's live range. Sequence b reads blocks [lo, hi): hi =
// ceil(kv_lens[b] / block_kv), lo = 0 or, with a window, the block of kv_lens[b] - q_len - left
// (the first position its first new token sees); split s of S takes [s n / S, (s + 1) n / S) of
// the n = hi - lo live blocks (split_blocks, generator/decode_splits.h), so blocks past kv_lens
// or wholly left of the window are neither loaded nor computed.
//
// Config: kQLen, kBlockKv, kSplits, kWindowLeft (-1 without a window).
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace cuda {

struct DecodeBlocks {
  int kv_len;  // the sequence's valid positions, the new tokens included
  int begin;   // the split's kv blocks [begin, end)
  int end;
};

template <class Config>
CUTE_HOST_DEVICE DecodeBlocks decode_blocks(int kv_len, int split) {
  int first = 0;
  if constexpr (Config::kWindowLeft >= 0) {
    first = kv_len - Config::kQLen - Config::kWindowLeft;
    first = first < 0 ? 0 : first;
  }
  const int lo = first / Config::kBlockKv;
  const int live = (kv_len - 1) / Config::kBlockKv + 1 - lo;
  return DecodeBlocks{kv_len, lo + split * live / Config::kSplits,
                      lo + (split + 1) * live / Config::kSplits};
}

}  // namespace cuda
}  // namespace kgen
