// The TMA descriptors of the sm90a decode kernel: K and V from the cache, of the forward's
// descriptor types over other global shapes (cuda/forward_tma.cuh: (rows, features, outer,
// outer) tensors, V declared transposed as the B operand of P V). Contiguous: (kv_len, d, kv
// heads, batch), as the forward's, a box per block. Paged: the pool (page_size, d, pages, kv
// heads), a page of one kv head being page_size contiguous rows, found through page_table.
// When a page holds whole blocks (kBlocksPerPage), a block is one box inside its page. When a
// block holds several pages (kPagesPerBlock), each page is its own boxes, landed where its rows
// sit in the block's stage of the forward's shared-memory layouts: one box of (page_size, 64) of
// K and one of (64, page_size) of V per 64 features (both layouts repeat their 128-byte swizzle
// atoms down the positions first, so a feature column keeps a page's rows contiguous). The
// swizzle follows the absolute address, and a page of a multiple of 8 rows starts on a whole
// swizzle period, so each box is the layout of a block's.
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
  static_assert(!kPaged || ((Config::kBlocksPerPage * Config::kBlockKv == Config::kPageSize ||
                             (Config::kPagesPerBlock * Config::kPageSize == Config::kBlockKv &&
                              Config::kPageSize % 8 == 0)) &&
                            Config::kPagesPerSequence * Config::kPageSize == Config::kKvLen),
                "a page holds whole blocks or a block whole pages (of whole swizzle periods), a "
                "sequence whole pages");
};

// The shared-memory boxes of one TMA copy. A block whose page holds it: the forward's tiles.
// A page of a block of several: (page_size, 64) of K and (64, page_size) of V.
template <class Config, class Traits, bool kPerPage = (Config::kPagesPerBlock > 0)>
struct DecodeBoxes {
  using K = typename Traits::SmemLayoutKTile;
  using V = typename Traits::SmemLayoutVTile;
};

template <class Config, class Traits>
struct DecodeBoxes<Config, Traits, true> {
  using Element = typename Traits::Element;
  static constexpr int kPage = Config::kPageSize;
  static constexpr int kColumns = 64;  // one 128-byte swizzle atom of 16-bit elements
  static_assert(Config::kHeadDim % kColumns == 0 && Config::kHeadDimV % kColumns == 0,
                "whole swizzle atom columns of K and V");
  using K = decltype(cute::tile_to_shape(cute::GMMA::Layout_K_SW128_Atom<Element>{},
                                         cute::Shape<cute::Int<kPage>, cute::Int<kColumns>>{}));
  using V = decltype(cute::tile_to_shape(cute::GMMA::Layout_MN_SW128_Atom<Element>{},
                                         cute::Shape<cute::Int<kColumns>, cute::Int<kPage>>{}));
};

template <class Config, class Traits>
struct DecodeTma {
  using Element = typename Traits::Element;
  using Boxes = DecodeBoxes<Config, Traits>;
  using K = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{},
                                         cuda::null_gmem<Element const, cuda::RowMajorStride>(),
                                         typename Boxes::K{}));
  using V = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{},
                                         cuda::null_gmem<Element const, cuda::ColumnMajorStride>(),
                                         typename Boxes::V{}));
  K k;
  V v;

  // From the caller's contiguous k and v (the launcher header's layouts).
  static DecodeTma make(const void* k, const void* v) {
    using namespace cute;
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
    return DecodeTma{make_tma_copy(SM90_TMA_LOAD{}, tk, typename Boxes::K{}),
                     make_tma_copy(SM90_TMA_LOAD{}, tv, typename Boxes::V{})};
  }
};

}  // namespace sm90a
}  // namespace kgen
