// The types and sizes every part of the sm90a backward kernel shares, derived from the
// generated Config of one kernel (docs/sm90a-backward.md, "Runtime and generated code").
//
// A Config is a struct with static members only:
//   Element                          cutlass::bfloat16_t or cutlass::half_t
//   kBatch, kQHeads, kKvHeads        the shape (int); kGroup follows
//   kQLen, kKvLen, kHeadDim          (head_dim_v = head_dim)
//   kBlockQ (64), kBlockKv, kQBlocks, kKvBlocks, kQPadded (kQBlocks * 64)
//   kConsumers, kThreads, kStages, kPlanRows
//   kProducerRegisters, kConsumerRegisters (uint32_t): the setmaxnreg split
//   kSharedBudget                    kgen's shared-memory budget, bytes
//   MmaSdP, MmaDkv, MmaDq            the wgmma atoms (wgmma.cuh)
//   kExp2Scale, kScale (float), ScoreMod     the score domain (cuda/score_mods.cuh)
//   Mask, SegmentMask                the transposed masks (masks.cuh)
//   kSinks (bool)                    dsinks (preprocess.cuh)
//   step_begin(list), step_partial_count(list), step_q(entry), kv_block_order(rank):
//                                    the transposed block plan's tables, device functions
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_atom.hpp>

#include "cuda/forward_tma.cuh"
#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

// The same shared-memory tiles read as their transposes: (rows, columns) -> (columns, rows),
// and with a stack mode (rows, columns, stack) -> (columns, rows, stack). A K-major
// 128-byte-swizzled tile seen this way is an MN-major one, the operand wgmma needs for the
// products that contract over the tile's rows.
template <class Layout, int kRows, int kColumns>
using TransposedTile = decltype(cute::composition(
    Layout{}, cute::make_layout(cute::Shape<cute::Int<kColumns>, cute::Int<kRows>>{},
                                cute::Stride<cute::Int<kRows>, cute::_1>{})));
template <class Layout, int kRows, int kColumns, int kStack>
using TransposedStack = decltype(cute::composition(
    Layout{},
    cute::make_layout(cute::Shape<cute::Int<kColumns>, cute::Int<kRows>, cute::Int<kStack>>{},
                      cute::Stride<cute::Int<kRows>, cute::_1, cute::Int<kRows * kColumns>>{})));

template <class Config>
struct BackwardTraits {
  using Element = typename Config::Element;
  static constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  static constexpr int kHeadDim = Config::kHeadDim;
  static constexpr int kConsumers = Config::kConsumers;
  static constexpr int kStages = Config::kStages;

  static_assert(Config::kBlockQ == 64, "one 64-row q tile per step");
  static_assert(Config::kBlockKv == 64 * kConsumers, "one consumer warpgroup per 64 kv rows");
  static_assert(Config::kThreads == 128 * (kConsumers + 1), "one producer warpgroup");
  static_assert(Config::kQPadded == 64 * Config::kQBlocks);
  static_assert(Config::kKvBlocks == (Config::kKvLen + Config::kBlockKv - 1) / Config::kBlockKv);

  // ---- Shared memory (128-byte swizzle, as wgmma and TMA expect it). Every tile is a
  // (64, head_dim) K-major tile: K and V stacked per consumer (kept for the whole CTA), Q and
  // dO stacked per stage (streamed). dS is one (64 kv, 64 q) tile per consumer.
  using Atom = cute::GMMA::Layout_K_SW128_Atom<Element>;
  using SmemLayoutTile =
      decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::_64, cute::Int<kHeadDim>>{}));
  using SmemLayoutKv = decltype(cute::tile_to_shape(
      Atom{}, cute::Shape<cute::_64, cute::Int<kHeadDim>, cute::Int<kConsumers>>{}));
  using SmemLayoutQ = decltype(cute::tile_to_shape(
      Atom{}, cute::Shape<cute::_64, cute::Int<kHeadDim>, cute::Int<kStages>>{}));
  using SmemLayoutDs = decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::_64, cute::_64>{}));
  // The transposes: Q and dO as (head_dim, q) B operands of dK and dV, K as the (head_dim, kv)
  // B operand of dQ, dS as its (q, kv) A operand.
  using SmemLayoutQt = TransposedStack<SmemLayoutQ, 64, kHeadDim, kStages>;
  using SmemLayoutTileT = TransposedTile<SmemLayoutTile, 64, kHeadDim>;
  using SmemLayoutDsT = TransposedTile<SmemLayoutDs, 64, 64>;
  static constexpr int kTileElements = 64 * kHeadDim;
  static constexpr int kDsElements = 64 * 64;

  struct SharedStorage {
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutKv>, 1024> k;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutKv>, 1024> v;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQ>, 1024> q;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQ>, 1024> dout;
    alignas(1024) cute::array_aligned<Element, kDsElements * kConsumers, 1024> ds;
    alignas(8) uint64_t kv_full;
    uint64_t q_full[kStages];
    uint64_t q_empty[kStages];
    uint64_t dout_full[kStages];
    uint64_t dout_empty[kStages];
  };
  static constexpr int kSharedBytes = int(sizeof(SharedStorage));
  static_assert(kSharedBytes <= Config::kSharedBudget, "kgen's shared-memory budget for this spec");

  // The transaction bytes each full barrier waits for.
  static constexpr uint32_t kTileBytes = uint32_t(kTileElements * sizeof(Element));
  static constexpr uint32_t kKvBytes = 2 * kConsumers * kTileBytes;

  // ---- Global tensors as the TMA descriptors see them: (rows, features, head, batch), the
  // feature dimension contiguous. Every load and store moves one (64, head_dim) tile.
  using TmaLoad = decltype(cute::make_tma_copy(
      cute::SM90_TMA_LOAD{}, cuda::null_gmem<Element const, cuda::RowMajorStride>(),
      SmemLayoutTile{}));
  using TmaStore = decltype(cute::make_tma_copy(
      cute::SM90_TMA_STORE{}, cuda::null_gmem<Element, cuda::RowMajorStride>(), SmemLayoutTile{}));
};

// The TMA descriptors of one kernel: the first member of its Params (__grid_constant__).
template <class Config>
struct BackwardTma {
  typename BackwardTraits<Config>::TmaLoad q;
  typename BackwardTraits<Config>::TmaLoad k;
  typename BackwardTraits<Config>::TmaLoad v;
  typename BackwardTraits<Config>::TmaLoad dout;
  typename BackwardTraits<Config>::TmaStore dk;
  typename BackwardTraits<Config>::TmaStore dv;
};

// The caller's workspace, f32 throughout, q rows padded to whole q blocks: the dq accumulator
// [batch][q_heads][kQPadded][head_dim], then lse in base 2 and delta, each
// [batch][q_heads][kQPadded].
template <class Config>
struct BackwardWorkspace {
  static constexpr int64_t kRows = int64_t(Config::kBatch) * Config::kQHeads * Config::kQPadded;
  static constexpr int64_t kBytes = kRows * (Config::kHeadDim + 2) * int64_t(sizeof(float));

  float* dq_accum;
  float* lse_log2;  // lse * log2(e); +inf where a row kept nothing (and on padding rows)
  float* delta;     // rowsum(dout * out); 0 on padding rows

  CUTE_HOST_DEVICE explicit BackwardWorkspace(void* base)
      : dq_accum(static_cast<float*>(base)),
        lse_log2(dq_accum + kRows * Config::kHeadDim),
        delta(lse_log2 + kRows) {}
};

}  // namespace sm90a
}  // namespace kgen
