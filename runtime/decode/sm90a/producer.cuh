// The decode kernel's producer: one elected thread of the producer warpgroup loads K and V of
// every kv block of the CTA's split by TMA into the ring (cuda/ring.cuh), each block from the
// contiguous cache, from the pool page page_table[b][block / blocks_per_page] holding it, or
// page by page from the pages page_table[b][block pages_per_block + p] it holds
// (decode/sm90a/tma.cuh). Nothing past the split's blocks is loaded (decode/cuda/walk.cuh).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/ring.cuh"
#include "decode/sm90a/tma.cuh"
#include "decode/sm90a/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

// Where kv block `kv_block` of the work's sequence lies in the descriptors' tensors: their
// outer coordinates and the block's index among the blocks of that (page_size or kv_len, d)
// slice.
struct CacheBlock {
  int outer2;
  int outer3;
  int tile;
};

template <class Config, class Params>
CUTE_DEVICE CacheBlock cache_block(Params const& params, DecodeWork const& work, int kv_block) {
  if constexpr (DecodeCache<Config>::kPaged) {
    static_assert(Config::kBlocksPerPage > 0, "a page holds whole blocks");
    const int page = __ldg(params.page_table + int64_t(work.batch) * Config::kPagesPerSequence +
                           kv_block / Config::kBlocksPerPage);
    return CacheBlock{page, work.kv_head, kv_block % Config::kBlocksPerPage};
  } else {
    return CacheBlock{work.kv_head, work.batch, kv_block};
  }
}

// The K and V boxes of the pages of kv block `kv_block`, one page at a time
// (Config::kPagesPerBlock, sm90a/decode/tma.cuh): page p of the block lands in the stage's rows
// [p page_size, (p + 1) page_size), K and V each in one box per 64 columns of their features.
template <class Config, class Params, class SharedStorage>
CUTE_DEVICE void load_block_pages(Params const& params, SharedStorage& smem, DecodeWork const& work,
                                  int kv_block, int stage) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Cache = DecodeCache<Config>;
  using Boxes = DecodeBoxes<Config, Traits>;
  constexpr int kPage = Config::kPageSize;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kHeadDimV = Config::kHeadDimV;
  constexpr int kBlockKv = Config::kBlockKv;
  constexpr int kColumns = Boxes::kColumns;
  Tensor mK = params.tma.k.get_tma_tensor(
      make_shape(Cache::kRows, kHeadDim, Cache::kOuter2, Cache::kOuter3));
  Tensor mV = params.tma.v.get_tma_tensor(
      make_shape(kHeadDimV, Cache::kRows, Cache::kOuter2, Cache::kOuter3));
  // A box's place in the stage: the forward's K and V tiles repeat their swizzle atoms down the
  // positions first, so the block's 64-feature column c starts at c block_kv 64 elements and a
  // page's rows are contiguous in it.
  typename Config::Element* k_stage = smem.k.data() + stage * kBlockKv * kHeadDim;
  typename Config::Element* v_stage = smem.v.data() + stage * kBlockKv * kHeadDimV;
  auto box_at = [&](typename Config::Element* stage_base, int c, int p) {
    return stage_base + c * kBlockKv * kColumns + p * kPage * kColumns;
  };
  CUTE_NO_UNROLL
  for (int p = 0; p < Config::kPagesPerBlock; ++p) {
    const int page = __ldg(params.page_table + int64_t(work.batch) * Config::kPagesPerSequence +
                           kv_block * Config::kPagesPerBlock + p);
    Tensor gK = local_tile(mK(_, _, page, work.kv_head), Shape<Int<kPage>, Int<kColumns>>{},
                           make_coord(_0{}, _));  // (page, 64, column block)
    CUTE_UNROLL
    for (int c = 0; c < kHeadDim / kColumns; ++c) {
      Tensor sK = make_tensor(make_smem_ptr(box_at(k_stage, c, p)),
                              append<3>(typename Boxes::K{}, Layout<_1, _0>{}));
      auto [tKgK, tKsK] = tma_partition(params.tma.k, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sK),
                                        group_modes<0, 2>(gK));
      copy(params.tma.k.with(smem.k_full[stage]), tKgK(_, c), tKsK(_, 0));
    }
    Tensor gV = local_tile(mV(_, _, page, work.kv_head), Shape<Int<kColumns>, Int<kPage>>{},
                           make_coord(_, _0{}));  // (64, page, column block)
    CUTE_UNROLL
    for (int c = 0; c < kHeadDimV / kColumns; ++c) {
      Tensor sV = make_tensor(make_smem_ptr(box_at(v_stage, c, p)),
                              append<3>(typename Boxes::V{}, Layout<_1, _0>{}));
      auto [tVgV, tVsV] = tma_partition(params.tma.v, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sV),
                                        group_modes<0, 2>(gV));
      copy(params.tma.v.with(smem.v_full[stage]), tVgV(_, c), tVsV(_, 0));
    }
  }
}

template <class Config, class Params>
CUTE_DEVICE void produce_decode(Params const& params,
                                typename ForwardTraits<Config>::SharedStorage& smem,
                                DecodeWork const& work) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Cache = DecodeCache<Config>;
  using Ring = cuda::RingPosition<Config::kStages>;
  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  constexpr int kHeadDim = Config::kHeadDim;
  constexpr int kHeadDimV = Config::kHeadDimV;
  constexpr int kBlockKv = Config::kBlockKv;

  if constexpr (Config::kPagesPerBlock > 0) {
    CUTE_NO_UNROLL
    for (int t = 0; t < work.tile_count(); ++t) {
      // Every page's boxes complete the block's two barriers, which expect the block's bytes.
      const Ring at = Ring::at(t);
      Barrier::wait(&smem.k_empty[at.stage], at.empty_phase());
      Barrier::wait(&smem.v_empty[at.stage], at.empty_phase());
      Barrier::arrive_and_expect_tx(&smem.k_full[at.stage], Traits::kKBytes);
      Barrier::arrive_and_expect_tx(&smem.v_full[at.stage], Traits::kVBytes);
      load_block_pages<Config>(params, smem, work, work.blocks.begin + t, at.stage);
    }
  } else {
    Tensor mK = params.tma.k.get_tma_tensor(
        make_shape(Cache::kRows, kHeadDim, Cache::kOuter2, Cache::kOuter3));
    Tensor mV = params.tma.v.get_tma_tensor(
        make_shape(kHeadDimV, Cache::kRows, Cache::kOuter2, Cache::kOuter3));
    Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
    Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});

    CUTE_NO_UNROLL
    for (int t = 0; t < work.tile_count(); ++t) {
      const CacheBlock block = cache_block<Config>(params, work, work.blocks.begin + t);
      // (block_kv, head_dim, block), (head_dim_v, block_kv, block) of the block's slice
      Tensor gK = local_tile(mK(_, _, block.outer2, block.outer3),
                             Shape<Int<kBlockKv>, Int<kHeadDim>>{}, make_coord(_, _0{}));
      Tensor gV = local_tile(mV(_, _, block.outer2, block.outer3),
                             Shape<Int<kHeadDimV>, Int<kBlockKv>>{}, make_coord(_0{}, _));
      auto [tKgK, tKsK] = tma_partition(params.tma.k, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sK),
                                        group_modes<0, 2>(gK));
      auto [tVgV, tVsV] = tma_partition(params.tma.v, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sV),
                                        group_modes<0, 2>(gV));
      const Ring at = Ring::at(t);
      Barrier::wait(&smem.k_empty[at.stage], at.empty_phase());
      Barrier::arrive_and_expect_tx(&smem.k_full[at.stage], Traits::kKBytes);
      copy(params.tma.k.with(smem.k_full[at.stage]), tKgK(_, block.tile), tKsK(_, at.stage));
      Barrier::wait(&smem.v_empty[at.stage], at.empty_phase());
      Barrier::arrive_and_expect_tx(&smem.v_full[at.stage], Traits::kVBytes);
      copy(params.tma.v.with(smem.v_full[at.stage]), tVgV(_, block.tile), tVsV(_, at.stage));
    }
  }
}

}  // namespace sm90a
}  // namespace kgen
