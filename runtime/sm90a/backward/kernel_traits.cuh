// The types and sizes every part of the sm90a backward kernel shares, derived from the
// generated Config of one kernel (docs/sm90a-backward.md, "Runtime and generated code").
//
// A Config is a struct with static members only:
//   Element                          cutlass::bfloat16_t or cutlass::half_t
//   kBatch, kQHeads, kKvHeads        the shape (int); kGroup follows
//   kQLen, kKvLen, kHeadDim, kHeadDimV
//   kBlockQ (64), kBlockKv, kQBlocks, kKvBlocks, kQPadded (kQBlocks * 64)
//   kKvSlots (kBlockKv / 64), kDimParts (consumers per slot), kDkWidth, kDvWidth (their windows)
//   kConsumers, kThreads, kStages, kPlanRows
//   kProducerRegisters, kConsumerRegisters (uint32_t): the setmaxnreg split
//   kSharedBudget                    kgen's shared-memory budget, bytes
//   MmaSdP, MmaDk, MmaDv, MmaDq      the wgmma atoms (wgmma.cuh)
//   kExp2Scale, kScale (float), ScoreMod     the score domain (cuda/score_mods.cuh)
//   Mask, SegmentMask                the mask policies (cuda/masks.cuh), on S^T tiles
//   kSinks (bool)                    dsinks (preprocess.cuh)
//   step_begin(list), step_partial_count(list), step_q(entry), kv_block_order(rank):
//                                    the transposed block plan's tables, device functions
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_atom.hpp>

#include "cuda/named_barriers.cuh"
#include "cuda/tma.cuh"

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

// The window of a swizzled shared-memory tile (or of one read as its transpose) of shape
// `tiler` whose first element is at `first`, a coordinate whose column is a multiple of 64:
// every 64-column group of a K-major 128-byte-swizzled tile is one whole swizzle-aligned
// block, so the window is the layout of the tile's leading `tiler`, moved by first's offset.
template <class SmemTensor, class Tiler, class Coord>
CUTE_HOST_DEVICE auto column_window(SmemTensor const& tile, Tiler const& tiler,
                                    Coord const& first) {
  using namespace cute;
  Tensor leading = local_tile(tile, tiler, repeat_like(tiler, _0{}));
  return make_tensor(leading.data() + tile.layout()(first), leading.layout());
}

template <class Config>
struct BackwardTraits {
  using Element = typename Config::Element;
  static constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  static constexpr int kHeadDim = Config::kHeadDim;
  static constexpr int kHeadDimV = Config::kHeadDimV;
  static constexpr int kKvSlots = Config::kKvSlots;
  static constexpr int kConsumers = Config::kConsumers;
  static constexpr int kStages = Config::kStages;

  static_assert(Config::kBlockQ == 64, "one 64-row q tile per step");
  static_assert(Config::kBlockKv == 64 * kKvSlots, "64 kv rows per slot");
  static_assert(kConsumers == kKvSlots * Config::kDimParts,
                "kDimParts consumer warpgroups per slot");
  static_assert(Config::kThreads == 128 * (kConsumers + 1), "one producer warpgroup");
  static_assert(kConsumers + 1 <= cuda::kMaxWarpgroups && kKvSlots <= cuda::kMaxWarpgroupSets,
                "a named barrier per warpgroup and per kv slot");
  static_assert(Config::kQPadded == 64 * Config::kQBlocks);
  static_assert(Config::kKvBlocks == (Config::kKvLen + Config::kBlockKv - 1) / Config::kBlockKv);

  // ---- Shared memory (128-byte swizzle, as wgmma and TMA expect it). Every tile is a
  // (64, features) K-major tile: K (head_dim) and V (head_dim_v) stacked per kv slot (kept
  // for the whole CTA), Q (head_dim) and dO (head_dim_v) stacked per stage (streamed). dS is
  // one (64 kv, 64 q) tile per consumer.
  using Atom = cute::GMMA::Layout_K_SW128_Atom<Element>;
  template <int kFeatures>
  using Tile =
      decltype(cute::tile_to_shape(Atom{}, cute::Shape<cute::_64, cute::Int<kFeatures>>{}));
  template <int kFeatures, int kStack>
  using Stack = decltype(cute::tile_to_shape(
      Atom{}, cute::Shape<cute::_64, cute::Int<kFeatures>, cute::Int<kStack>>{}));
  using SmemLayoutK = Tile<kHeadDim>;   // one kv slot's K, also a Q tile
  using SmemLayoutV = Tile<kHeadDimV>;  // one kv slot's V, also a dO tile
  using SmemLayoutKStack = Stack<kHeadDim, kKvSlots>;
  using SmemLayoutVStack = Stack<kHeadDimV, kKvSlots>;
  using SmemLayoutQ = Stack<kHeadDim, kStages>;
  using SmemLayoutDo = Stack<kHeadDimV, kStages>;
  using SmemLayoutDs = Tile<64>;
  // The transposes: Q and dO as (features, q) B operands of dK and dV, K as the (head_dim, kv)
  // B operand of dQ, dS as its (q, kv) A operand.
  using SmemLayoutQt = TransposedStack<SmemLayoutQ, 64, kHeadDim, kStages>;
  using SmemLayoutDot = TransposedStack<SmemLayoutDo, 64, kHeadDimV, kStages>;
  using SmemLayoutKt = TransposedTile<SmemLayoutK, 64, kHeadDim>;
  using SmemLayoutDsT = TransposedTile<SmemLayoutDs, 64, 64>;
  static constexpr int kKElements = 64 * kHeadDim;
  static constexpr int kVElements = 64 * kHeadDimV;
  static constexpr int kDsElements = 64 * 64;

  struct SharedStorage {
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutKStack>, 1024> k;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutVStack>, 1024> v;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQ>, 1024> q;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutDo>, 1024> dout;
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
  static constexpr uint32_t kQBytes = uint32_t(kKElements * sizeof(Element));   // a Q or K tile
  static constexpr uint32_t kDoBytes = uint32_t(kVElements * sizeof(Element));  // a dO or V tile
  static constexpr uint32_t kKvBytes = kKvSlots * (kQBytes + kDoBytes);

  // ---- Global tensors as the TMA descriptors see them: (rows, features, head, batch), the
  // feature dimension contiguous. Every load and store moves one (64, features) tile.
  template <class Layout>
  using TmaLoad = decltype(cute::make_tma_copy(
      cute::SM90_TMA_LOAD{}, cuda::null_gmem<Element const, cuda::RowMajorStride>(), Layout{}));
  template <class Layout>
  using TmaStore = decltype(cute::make_tma_copy(
      cute::SM90_TMA_STORE{}, cuda::null_gmem<Element, cuda::RowMajorStride>(), Layout{}));
};

// The columns of dK (and dQ) and of dV one consumer warpgroup computes: all of them, or with
// two parts per kv slot, windows of kDkWidth and kDvWidth columns, part 0's from column 0 and
// part 1's against the right edge (docs/sm90a-backward.md, "Head dims above 128"). A part
// owns its window less what part 0 covers: the epilogue stores part 0's values last, and
// dQ is added for owned columns only.
template <class Config>
struct BackwardColumns {
  static constexpr int kDkWidth = Config::kDkWidth;
  static constexpr int kDvWidth = Config::kDvWidth;
  static_assert(kDkWidth % 64 == 0 && kDvWidth % 64 == 0,
                "whole 64-column groups: the swizzle atom's width, read MN-major");
  static_assert(Config::kDimParts * kDkWidth >= Config::kHeadDim &&
                    Config::kDimParts * kDvWidth >= Config::kHeadDimV && Config::kDimParts <= 2,
                "the windows cover every column");
  static_assert(Config::kDimParts == 2 ||
                    (kDkWidth == Config::kHeadDim && kDvWidth == Config::kHeadDimV),
                "one part holds every column");
  static_assert(Config::kDimParts == 1 ||
                    (Config::kHeadDim % 64 == 0 && Config::kHeadDimV % 64 == 0),
                "part 1's window starts on a 64-column group");
  static constexpr int kDqChunks = kDkWidth / 64;  // dQ's 64-column chunks in a window

  int part;
  int dk_first;        // the window's first column of dK (and dQ)
  int dv_first;        // of dV
  int dq_owned_first;  // the first owned dQ chunk of the window (part 1: past part 0's)

  CUTE_DEVICE explicit BackwardColumns(int part_)
      : part(part_),
        dk_first(part_ == 0 ? 0 : Config::kHeadDim - kDkWidth),
        dv_first(part_ == 0 ? 0 : Config::kHeadDimV - kDvWidth),
        dq_owned_first(part_ == 0 ? 0 : (2 * kDkWidth - Config::kHeadDim) / 64) {}
};

// The TMA descriptors of one kernel: the first member of its Params (__grid_constant__).
template <class Config>
struct BackwardTma {
  using Traits = BackwardTraits<Config>;
  typename Traits::template TmaLoad<typename Traits::SmemLayoutK> q;
  typename Traits::template TmaLoad<typename Traits::SmemLayoutK> k;
  typename Traits::template TmaLoad<typename Traits::SmemLayoutV> v;
  typename Traits::template TmaLoad<typename Traits::SmemLayoutV> dout;
  typename Traits::template TmaStore<typename Traits::SmemLayoutK> dk;
  typename Traits::template TmaStore<typename Traits::SmemLayoutV> dv;
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
