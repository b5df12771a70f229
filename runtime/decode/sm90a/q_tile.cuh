// The decode kernel's q tile into shared memory: 64 rows of the (batch, kv head)'s group x
// q_len rows, read by the consumer warpgroup itself (16 bytes a load) into the forward's
// swizzled Q layout; rows past the tile's are zeros. The rows of one kv head's q heads are
// contiguous in q [batch][q heads][q_len][d], so row r of kv head g is q head g group + r / q_len,
// token r % q_len. Then a proxy fence (wgmma reads in the async proxy) and the warpgroup's
// barrier: every warp's rows are in before any wgmma reads them.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/named_barriers.cuh"
#include "decode/sm90a/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void load_q_tile(Params const& params,
                             typename ForwardTraits<Config>::SharedStorage& smem,
                             DecodeWork const& work, int thread, int warp_group) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;
  constexpr int kChunk = 16 / int(sizeof(Element));   // elements of one 16-byte load
  constexpr int kChunks = Config::kHeadDim / kChunk;  // per row
  static_assert(Config::kHeadDim % 64 == 0, "whole 128-byte swizzle rows");
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQTile{});
  const Element* q =
      static_cast<const Element*>(params.q) +
      (int64_t(work.batch) * Config::kKvHeads + work.kv_head) * Config::kRows * Config::kHeadDim;
  for (int e = thread; e < 64 * kChunks; e += 128) {
    const int row = e / kChunks;
    const int column = (e % kChunks) * kChunk;
    const int q_row = work.row_origin + row;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (q_row < Config::kRows)
      value = __ldg(reinterpret_cast<const uint4*>(q + int64_t(q_row) * Config::kHeadDim + column));
    // 16 aligned bytes stay together under the 128-byte swizzle (it permutes 16-byte units).
    *reinterpret_cast<uint4*>(&sQ(row, column)) = value;
  }
  cutlass::arch::fence_view_async_shared();
  cuda::sync_warpgroup(warp_group);
}

}  // namespace sm90a
}  // namespace kgen
