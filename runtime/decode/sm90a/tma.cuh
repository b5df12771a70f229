// The TMA descriptors of the sm90a decode kernel: K and V blocks from the cache, of the same
// types as the forward's (cuda/forward_tma.cuh: (rows, features, outer, outer) tensors) over
// other global shapes. Contiguous: (kv_len, d, kv heads, batch), as the forward's. Paged: the
// pool (page_size, d, pages, kv heads), a page of one kv head being page_size contiguous rows;
// a block is a box inside one page (block_kv divides page_size), found through page_table.
// V is declared transposed, (d_v, rows, ...), as the B operand of P V.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>

#include "cuda/forward_tma.cuh"

namespace kgen {
namespace sm90a {

// The cache as the descriptors see it: rows of mode 0, then two outer modes.
template <class Config>
struct DecodeCache {
  static constexpr bool kPaged = Config::kPageSize > 0;
  static constexpr int kRows = kPaged ? Config::kPageSize : Config::kKvLen;
  static constexpr int kOuter2 = kPaged ? Config::kPages : Config::kKvHeads;
  static constexpr int kOuter3 = kPaged ? Config::kKvHeads : Config::kBatch;
  static_assert(!kPaged || (Config::kBlocksPerPage * Config::kBlockKv == Config::kPageSize &&
                            Config::kPagesPerSequence * Config::kPageSize == Config::kKvLen),
                "a page holds whole blocks, a sequence whole pages");
};

template <class Traits>
struct DecodeTma {
  using Forward = cuda::ForwardTma<Traits>;
  typename Forward::K k;
  typename Forward::V v;

  // From the caller's contiguous k and v (the launcher header's layouts).
  template <class Config>
  static DecodeTma make(const void* k, const void* v) {
    using namespace cute;
    using Element = typename Traits::Element;
    using Cache = DecodeCache<Config>;
    constexpr int64_t kD = Config::kHeadDim;
    constexpr int64_t kDv = Config::kHeadDimV;
    Tensor tk = make_tensor(
        make_gmem_ptr(static_cast<Element const*>(k)),
        make_shape(int(Cache::kRows), int(kD), int(Cache::kOuter2), int(Cache::kOuter3)),
        make_stride(kD, _1{}, Cache::kRows * kD, Cache::kOuter2 * Cache::kRows * kD));
    Tensor tv = make_tensor(
        make_gmem_ptr(static_cast<Element const*>(v)),
        make_shape(int(kDv), int(Cache::kRows), int(Cache::kOuter2), int(Cache::kOuter3)),
        make_stride(_1{}, kDv, Cache::kRows * kDv, Cache::kOuter2 * Cache::kRows * kDv));
    return DecodeTma{make_tma_copy(SM90_TMA_LOAD{}, tk, typename Traits::SmemLayoutKTile{}),
                     make_tma_copy(SM90_TMA_LOAD{}, tv, typename Traits::SmemLayoutVTile{})};
  }
};

}  // namespace sm90a
}  // namespace kgen
