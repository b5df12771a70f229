// The consumer's epilogue: the final statistics of its rows (cuda/finish_row.cuh: out = O / l,
// lse = m + log(l), sinks folded in first), then O through shared memory (over the consumer's
// own Q tile) and one TMA store.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/convert.cuh"
#include "cuda/finish_row.cuh"
#include "cuda/named_barriers.cuh"
#include "cuda/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"
#include "sm90a/forward/math.cuh"
#include "sm90a/forward/online_softmax.cuh"
#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

// O *= out_scale per row, and the lse written when Config::kLse. `view`: the thread's rows
// of the CTA's q block.
template <class Config, class Params, class Fragment, class View>
CUTE_DEVICE void normalize_rows(Params const& params, OnlineSoftmax<Config> const& softmax,
                                Fragment& acc_o, cuda::CtaWork const& work, View const& view,
                                int lane) {
  const float sink_log2 = cuda::sink_log2<Config>(params, work.head);
  float out_scale[View::kRows];
  CUTE_UNROLL
  for (int r = 0; r < View::kRows; ++r) {
    const cuda::FinishedRow row =
        cuda::finish_row<Config>(softmax.row_max[r], quad_sum(softmax.row_sum[r]), sink_log2);
    out_scale[r] = row.out_scale;
    // One thread of each quad writes the row's lse.
    if constexpr (Config::kLse) {
      if (lane % 4 == 0)
        cuda::store_lse<Config>(params, work.batch, work.head,
                                work.q_block * Config::kBlockQ + view.row(r), row.lse);
    }
  }
  scale_rows(acc_o, out_scale);
}

// O to shared memory over consumer `consumer`'s Q tile (no wgmma reads it any more), then one
// TMA store by one thread; rows past q_len are clipped by the TMA unit.
template <class Config, class Params, class MmaPV, class Fragment>
CUTE_DEVICE void store_o(Params const& params, typename ForwardTraits<Config>::SharedStorage& smem,
                         MmaPV const& mma_pv, Fragment const& acc_o, cuda::CtaWork const& work,
                         int consumer, int thread) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;
  constexpr int kHeadDimV = Config::kHeadDimV;
  Tensor sO = make_tensor(make_smem_ptr(smem.q.data() + consumer * Traits::kQTileElements),
                          typename Traits::SmemLayoutO{});
  Tensor frag_o = make_tensor_like<Element>(acc_o);
  cuda::convert_fragment<Element>(acc_o, frag_o);
  store_fragment<Element>(mma_pv, frag_o, sO, thread);
  cutlass::arch::fence_view_async_shared();  // generic-proxy writes, read next by the TMA unit
  cuda::sync_warpgroup(1 + consumer);        // consumer c is warpgroup c + 1
  if (thread / 32 == 0 && cute::elect_one_sync()) {
    Tensor mO = params.tma.o.get_tma_tensor(
        make_shape(Config::kQLen, kHeadDimV, Config::kQHeads, Config::kBatch));
    Tensor gO = local_tile(mO(_, _, work.head, work.batch), Shape<_64, Int<kHeadDimV>>{},
                           make_coord(_, _0{}));
    auto [tOgO, tOsO] = tma_partition(params.tma.o, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sO),
                                      group_modes<0, 2>(gO));
    copy(params.tma.o, tOsO, tOgO(_, work.q_block * Config::kConsumers + consumer));
    tma_store_arrive();
    tma_store_wait<0>();  // the shared-memory source must outlive the store
  }
}

}  // namespace sm90a
}  // namespace kgen
