// The types and sizes every part of the sm90a forward kernel shares, derived from the
// generated Config of one kernel (docs/sm90a-kernel.md, "Runtime and generated code").
//
// A Config is a struct with static members only:
//   Element                          cutlass::bfloat16_t or cutlass::half_t
//   kBatch, kQHeads, kKvHeads        the shape (int); kGroup follows
//   kQLen, kKvLen, kHeadDim, kHeadDimV
//   kBlockQ, kBlockKv, kQBlocks, kKvBlocks, kConsumers, kThreads, kStages, kPlanRows
//   kPingPong (bool)                 two consumers take turns to issue their GEMMs
//                                    (consumer/issue_turns.cuh)
//   kProducerRegisters, kConsumerRegisters (uint32_t): the setmaxnreg split
//   kSharedBudget                    kgen's shared-memory budget, bytes
//   MmaQK, MmaPV                     the wgmma atoms of S = Q K^T and O += P V
//   kExp2Scale (float), ScoreMod     the score domain (cuda/score_mods.cuh)
//   Mask, SegmentMask                the mask policies (cuda/masks.cuh)
//   kLse, kSinks (bool)              the epilogue's statistics (epilogue.cuh)
//   tile_begin(list), tile_partial_count(list), tile_kv(entry), q_block_order(rank):
//                                    the block plan's tables, device functions
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_atom.hpp>

#include "cuda/named_barriers.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct ForwardTraits {
  using Element = typename Config::Element;
  static constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  static constexpr int kHeadDim = Config::kHeadDim;
  static constexpr int kHeadDimV = Config::kHeadDimV;
  static constexpr int kBlockKv = Config::kBlockKv;
  static constexpr int kConsumers = Config::kConsumers;
  static constexpr int kStages = Config::kStages;

  static_assert(Config::kQBlocks == (Config::kQLen + Config::kBlockQ - 1) / Config::kBlockQ);
  static_assert(Config::kKvBlocks == (Config::kKvLen + kBlockKv - 1) / kBlockKv);
  static_assert(Config::kBlockQ == 64 * kConsumers, "one consumer warpgroup per 64 q rows");
  static_assert(Config::kThreads == 128 * (kConsumers + 1), "one producer warpgroup");
  static_assert(kConsumers + 1 <= cuda::kMaxWarpgroups, "a named barrier per warpgroup");
  static_assert(kHeadDimV <= kHeadDim, "O is staged in the consumer's Q tile");

  // ---- Shared memory layouts (128-byte swizzle, as wgmma and TMA expect them)
  // Q: one (64, head_dim) K-major tile per consumer warpgroup, stacked on mode 2.
  using SmemLayoutQTile = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<Element>{}, cute::Shape<cute::_64, cute::Int<kHeadDim>>{}));
  using SmemLayoutQ = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<Element>{},
      cute::Shape<cute::_64, cute::Int<kHeadDim>, cute::Int<kConsumers>>{}));
  // K: (block_kv, head_dim) K-major, one tile per stage.
  using SmemLayoutKTile =
      decltype(cute::tile_to_shape(cute::GMMA::Layout_K_SW128_Atom<Element>{},
                                   cute::Shape<cute::Int<kBlockKv>, cute::Int<kHeadDim>>{}));
  using SmemLayoutK = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kBlockKv>, cute::Int<kHeadDim>, cute::Int<kStages>>{}));
  // V as the B operand of P V: (head_dim_v, block_kv), head_dim_v contiguous (MN-major). Its
  // swizzle atoms (64 features x 8 positions) repeat down the positions first (Step<_2, _1>),
  // as K's repeat down its rows: each 64-feature column of the tile is block_kv contiguous
  // 128-byte rows, so TMA loads a tile in head_dim_v / 64 boxes, as many as K's. Repeated
  // features first (the default order), the columns interleave every 8 positions and TMA cut
  // the tile into (64, 8) boxes: 32 at d128. wgmma reads either order (the descriptor's
  // leading and stride byte offsets).
  using SmemLayoutVTile = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_MN_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kHeadDimV>, cute::Int<kBlockKv>>{}, cute::Step<cute::_2, cute::_1>{}));
  using SmemLayoutV = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_MN_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kHeadDimV>, cute::Int<kBlockKv>, cute::Int<kStages>>{},
      cute::Step<cute::_2, cute::_1, cute::_3>{}));
  // O: one consumer's (64, head_dim_v) tile, written over that consumer's Q tile.
  using SmemLayoutO = decltype(cute::tile_to_shape(cute::GMMA::Layout_K_SW128_Atom<Element>{},
                                                   cute::Shape<cute::_64, cute::Int<kHeadDimV>>{}));
  static constexpr int kQTileElements = 64 * kHeadDim;
  static_assert(cute::cosize_v<SmemLayoutO> <= kQTileElements, "O fits in the consumer's Q tile");

  struct SharedStorage {
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQ>, 1024> q;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutK>, 1024> k;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutV>, 1024> v;
    alignas(8) uint64_t q_full;
    uint64_t k_full[kStages];
    uint64_t k_empty[kStages];
    uint64_t v_full[kStages];
    uint64_t v_empty[kStages];
  };
  static constexpr int kSharedBytes = int(sizeof(SharedStorage));
  static_assert(kSharedBytes <= Config::kSharedBudget, "kgen's shared-memory budget for this spec");

  // The transaction bytes each full barrier waits for.
  static constexpr uint32_t kQBytes = uint32_t(cute::cosize_v<SmemLayoutQ> * sizeof(Element));
  static constexpr uint32_t kKBytes = uint32_t(kBlockKv * kHeadDim * sizeof(Element));
  static constexpr uint32_t kVBytes = uint32_t(kBlockKv * kHeadDimV * sizeof(Element));
};

}  // namespace sm90a
}  // namespace kgen
