// The types and sizes every part of the sm100a forward kernel shares, derived from the
// generated Config of one kernel (docs/sm100a-kernel.md, "Runtime and generated code").
//
// A Config is a struct with static members only:
//   Element                          cutlass::bfloat16_t or cutlass::half_t
//   kBatch, kQHeads, kKvHeads        the shape (int)
//   kQLen, kKvLen, kHeadDim, kHeadDimV
//   kBlockQ (128), kBlockKv, kQBlocks, kKvBlocks, kStages, kThreads (384), kPlanRows
//   kWorkItems (batch * q_heads * q_blocks), kCtas (the persistent grid, <= kWorkItems)
//   kSoftmaxRegisters, kCorrectionRegisters, kOtherRegisters (uint32_t): the setmaxnreg split
//   kTmemColumns                     tensor-memory columns the CTA allocates (a power of 2)
//   kSharedBudget                    kgen's shared-memory budget, bytes
//   MmaQK, MmaPV                     the tcgen05 atoms of S = Q K^T (SS) and O += P V (TS)
//   kExp2Scale (float), ScoreMod     the score domain (cuda/score_mods.cuh)
//   kRescaleThreshold (float)        how far (log2 units) the row max may rise before O is rescaled
//   Mask, SegmentMask                the mask policies (cuda/masks.cuh)
//   kLse, kSinks (bool)              the final statistics (softmax.cuh)
//   tile_begin(list), tile_partial_count(list), tile_kv(entry), q_block_order(rank):
//                                    the block plan's tables, device functions
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

#include "cuda/named_barriers.cuh"

namespace kgen {
namespace sm100a {

template <class Config>
struct ForwardTraits {
  using Element = typename Config::Element;
  static constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  static constexpr int kBlockQ = Config::kBlockQ;
  static constexpr int kBlockKv = Config::kBlockKv;
  static constexpr int kHeadDim = Config::kHeadDim;
  static constexpr int kHeadDimV = Config::kHeadDimV;
  static constexpr int kStages = Config::kStages;

  static_assert(Config::kQBlocks == (Config::kQLen + kBlockQ - 1) / kBlockQ);
  static_assert(Config::kKvBlocks == (Config::kKvLen + kBlockKv - 1) / kBlockKv);
  static_assert(kBlockQ == 128, "one 128-row tcgen05 tile: one tensor-memory lane per q row");
  static_assert(Config::kThreads == 384, "softmax, correction and the other warpgroup");
  static_assert(Config::kThreads <= 128 * cuda::kMaxWarpgroups, "a named barrier per warpgroup");
  static_assert(kHeadDimV <= kHeadDim, "O is staged in Q's shared memory");

  // ---- Tensor memory: 128 lanes (one per q row) by kTmemColumns 32-bit columns.
  // S of tile t in buffer t % 2 (f32, block_kv columns each); P (16-bit, two per column) over
  // the upper half of its S; O (f32, head_dim_v columns) after both.
  static constexpr uint32_t kTmemS0 = 0;
  static constexpr uint32_t kTmemS1 = kBlockKv;
  static constexpr uint32_t kTmemPOffset = kBlockKv / 2;
  static constexpr uint32_t kTmemO = 2 * kBlockKv;
  static_assert(kTmemO + kHeadDimV <= Config::kTmemColumns && Config::kTmemColumns <= 512,
                "S, S and O fit the allocated tensor memory");

  // ---- Shared memory layouts (128-byte swizzle, as tcgen05 descriptors and TMA expect them)
  // Q: (128, head_dim) K-major. K: (block_kv, head_dim) K-major, one tile per stage.
  using SmemLayoutQTile = decltype(cute::tile_to_shape(
      cute::UMMA::Layout_K_SW128_Atom<Element>{}, cute::Shape<cute::_128, cute::Int<kHeadDim>>{}));
  using SmemLayoutKTile =
      decltype(cute::tile_to_shape(cute::UMMA::Layout_K_SW128_Atom<Element>{},
                                   cute::Shape<cute::Int<kBlockKv>, cute::Int<kHeadDim>>{}));
  using SmemLayoutK = decltype(cute::tile_to_shape(
      cute::UMMA::Layout_K_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kBlockKv>, cute::Int<kHeadDim>, cute::Int<kStages>>{}));
  // V as the B operand of P V: (head_dim_v, block_kv), head_dim_v contiguous (MN-major), its
  // swizzle atoms repeated down the positions first (Step<_2, _1>) so that TMA loads a tile in
  // head_dim_v / 64 boxes, as sm90a's V (sm90a/forward/kernel_traits.cuh says why).
  using SmemLayoutVTile = decltype(cute::tile_to_shape(
      cute::UMMA::Layout_MN_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kHeadDimV>, cute::Int<kBlockKv>>{}, cute::Step<cute::_2, cute::_1>{}));
  using SmemLayoutV = decltype(cute::tile_to_shape(
      cute::UMMA::Layout_MN_SW128_Atom<Element>{},
      cute::Shape<cute::Int<kHeadDimV>, cute::Int<kBlockKv>, cute::Int<kStages>>{},
      cute::Step<cute::_2, cute::_1, cute::_3>{}));
  // O: (128, head_dim_v), written over Q once every product is done; P's shape, for the
  // TMEM operand of O += P V (no shared memory behind it).
  using SmemLayoutO = decltype(cute::tile_to_shape(
      cute::UMMA::Layout_K_SW128_Atom<Element>{}, cute::Shape<cute::_128, cute::Int<kHeadDimV>>{}));
  using LayoutP = decltype(cute::tile_to_shape(cute::UMMA::Layout_K_SW128_Atom<Element>{},
                                               cute::Shape<cute::_128, cute::Int<kBlockKv>>{}));
  static_assert(cute::cosize_v<SmemLayoutO> <= cute::cosize_v<SmemLayoutQTile>, "O fits over Q");

  struct SharedStorage {
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQTile>, 1024> q;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutK>, 1024> k;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutV>, 1024> v;
    // Per q row: O's rescale factor of tile t (slot t % 2), then out = O * out_scale.
    float row_scale[2][kBlockQ];
    float out_scale[kBlockQ];
    alignas(8) uint64_t q_full;
    uint64_t q_empty;  // the epilogue stored the item's O from Q's memory (correction -> load)
    uint64_t k_full[kStages];
    uint64_t k_empty[kStages];
    uint64_t v_full[kStages];
    uint64_t v_empty[kStages];
    uint64_t s_full[2];       // S of tile t is in tensor memory (MMA -> softmax)
    uint64_t scale_full[2];   // row_scale of tile t is written (softmax -> correction)
    uint64_t p_full[2];       // P of tile t is written and O rescaled: P V may run (-> MMA)
    uint64_t o_full;          // every product issued so far is done (MMA -> correction)
    uint64_t out_scale_full;  // out_scale is written (softmax -> correction)
    uint32_t tmem_base;       // written by tcgen05.alloc
  };
  static constexpr int kSharedBytes = int(sizeof(SharedStorage));
  static_assert(kSharedBytes == Config::kSharedBudget, "kgen's shared-memory budget for this spec");

  // The transaction bytes each full barrier waits for.
  static constexpr uint32_t kQBytes = uint32_t(kBlockQ * kHeadDim * sizeof(Element));
  static constexpr uint32_t kKBytes = uint32_t(kBlockKv * kHeadDim * sizeof(Element));
  static constexpr uint32_t kVBytes = uint32_t(kBlockKv * kHeadDimV * sizeof(Element));
};

}  // namespace sm100a
}  // namespace kgen
