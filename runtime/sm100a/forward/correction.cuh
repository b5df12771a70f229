// The correction warpgroup: thread t owns q row t of O in tensor memory. Between the products
// O += P(t - 1) V(t - 1) and O += P(t) V(t) it multiplies its row by the factor the softmax
// handed over, and only when a row of its warp needs it (the skip is warp-uniform: tensor
// memory loads and stores are warp collectives). At the end of each work item it writes
// out = O * out_scale through shared memory (over Q) and one TMA store, then frees Q's
// memory for the next item's Q (q_empty).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/named_barriers.cuh"
#include "cuda/ring.cuh"
#include "cuda/work.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/schedule.cuh"
#include "sm100a/forward/sync.cuh"
#include "sm100a/forward/tmem.cuh"

namespace kgen {
namespace sm100a {

// Tensor memory is read and written 32 columns at a time (one LDTM.x32 / STTM.x32).
constexpr int kCorrectionColumns = 32;
// The correction warpgroup: warps 4-7 (kernel.cuh).
constexpr int kCorrectionWarpgroup = 1;

template <class Config>
CUTE_DEVICE void rescale_o(uint32_t o_address, float scale) {
  using namespace cute;
  CUTE_UNROLL
  for (int chunk = 0; chunk < Config::kHeadDimV / kCorrectionColumns; ++chunk) {
    auto view =
        tmem_columns<kCorrectionColumns>(tmem_o<Config>(o_address), chunk * kCorrectionColumns);
    array<float, kCorrectionColumns> o;
    load_row<kCorrectionColumns>(view, o);
    cutlass::arch::fence_view_async_tmem_load();
    CUTE_UNROLL
    for (int c = 0; c < kCorrectionColumns; ++c) o[c] *= scale;
    store_row<kCorrectionColumns>(view, o);
  }
  cutlass::arch::fence_view_async_tmem_store();  // before the next product reads O
}

// out = 0 for the rows of an item with no tile, straight to global memory: such an item
// uses no barrier and no shared memory (schedule.cuh), so no other role waits for it.
template <class Config, class Params>
CUTE_DEVICE void store_zeros(Params const& params, cuda::CtaWork const& work, int row) {
  using Element = typename Config::Element;
  static_assert(sizeof(Element) == 2, "a row is head_dim_v / 8 chunks of 16 bytes");
  const int i = work.q_block * Config::kBlockQ + row;
  if (i >= Config::kQLen) return;
  Element* out = static_cast<Element*>(params.out) + work.batch * params.out_strides.batch +
                 work.head * params.out_strides.head + i * params.out_strides.row;
  CUTE_UNROLL
  for (int v = 0; v < Config::kHeadDimV / 8; ++v) reinterpret_cast<uint4*>(out)[v] = uint4{};
}

template <class Config, class Params>
CUTE_DEVICE void correct_and_store(Params const& params,
                                   typename ForwardTraits<Config>::SharedStorage& smem,
                                   uint32_t tmem_base) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;
  constexpr int kHeadDimV = Config::kHeadDimV;
  const int row = int(threadIdx.x) % 128;
  const uint32_t o_address = tmem_base + Traits::kTmemO;
  Tensor sO = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutO{});
  Tensor mO = params.tma.o.get_tma_tensor(
      make_shape(Config::kQLen, kHeadDimV, Config::kQHeads, Config::kBatch));

  // The S/P buffers alternate over the CTA's tiles; o_full completes once per product of P V
  // (one per tile), out_scale_full once per live item.
  using Buffer = cuda::RingPosition<2>;
  using Once = cuda::RingPosition<1>;

  for_each_work_item<Config>(params, [&](cuda::CtaWork const& work, ItemCounts const& at) {
    if (work.tile_count == 0) {
      store_zeros<Config>(params, work, row);
      return;
    }
    CUTE_NO_UNROLL
    for (int t = 0; t < work.tile_count; ++t) {
      const int g = at.tiles + t;  // the CTA's tile count
      const Buffer buffer = Buffer::at(g);
      wait(&smem.scale_full[buffer.stage], buffer.phase);
      const float scale = smem.row_scale[buffer.stage][row];
      if (t > 0) {  // O holds P V of the item's tiles before t once the last product is done
        // O only: no shared-memory access of this thread depends on the products here.
        wait_relaxed_for_tmem(&smem.o_full, Once::at(g - 1).phase);
        if (__any_sync(0xffffffffu, scale != 1.f)) rescale_o<Config>(o_address, scale);
      }
      // A release: the rescale of O (waited for with wait::st), and this row's read of
      // row_scale[buffer.stage], which the softmax overwrites two tiles on (softmax.cuh).
      arrive_per_warp(&smem.p_full[buffer.stage]);
    }
    // Every product is done. An acquire, not the relaxed pattern: the stores of out below go
    // over Q, which the tensor core read for this item's products (ordered by the commit).
    wait(&smem.o_full, Once::at(at.tiles + work.tile_count - 1).phase);
    wait(&smem.out_scale_full, Once::at(at.live).phase);
    const float out_scale = smem.out_scale[row];

    // out = O * out_scale, row by row into shared memory (Q is no longer read: every product
    // is done), 16 bytes at a time: the 128-byte swizzle keeps 8 consecutive elements of a
    // row together.
    CUTE_UNROLL
    for (int chunk = 0; chunk < kHeadDimV / kCorrectionColumns; ++chunk) {
      array<float, kCorrectionColumns> o;
      load_row<kCorrectionColumns>(
          tmem_columns<kCorrectionColumns>(tmem_o<Config>(o_address), chunk * kCorrectionColumns),
          o);
      cutlass::arch::fence_view_async_tmem_load();
      CUTE_UNROLL
      for (int c = 0; c < kCorrectionColumns; ++c) o[c] *= out_scale;
      array<uint4, kCorrectionColumns / 8> out;  // 8 elements of 16 bits each
      cuda::convert_to_element<Element, kCorrectionColumns>(o.data(), out.data());
      CUTE_UNROLL
      for (int v = 0; v < kCorrectionColumns / 8; ++v)
        *reinterpret_cast<uint4*>(&sO(row, chunk * kCorrectionColumns + 8 * v)) = out[v];
    }
    cutlass::arch::fence_view_async_shared();  // generic-proxy writes, read next by the TMA unit
    cuda::sync_warpgroup(kCorrectionWarpgroup);
    if (row == 0) {
      Tensor gO = local_tile(mO(_, _, work.head, work.batch), Shape<_128, Int<kHeadDimV>>{},
                             make_coord(_, _0{}));
      auto [tOgO, tOsO] = tma_partition(params.tma.o, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sO),
                                        group_modes<0, 2>(gO));
      copy(params.tma.o, tOsO, tOgO(_, work.q_block));
      tma_store_arrive();
      tma_store_wait<0>();  // the shared-memory source is read: Q's memory is free again
      cutlass::arch::ClusterBarrier::arrive(&smem.q_empty);
    }
  });
}

}  // namespace sm100a
}  // namespace kgen
