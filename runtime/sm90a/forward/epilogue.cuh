// The consumer's epilogue: the final statistics of its rows (out = O / l and lse = m + log(l),
// docs/spec-format.md, "Top-level keys"; sinks folded in first), then O through shared memory
// (over the consumer's own Q tile) and one TMA store.
#pragma once

#include <cmath>
#include <cstdint>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/numeric_conversion.h>

#include "cuda/exp2.cuh"
#include "cuda/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"
#include "sm90a/forward/math.cuh"
#include "sm90a/forward/online_softmax.cuh"

namespace kgen {
namespace sm90a {

// O /= l per row (0 for a row with nothing kept), and the lse written when Config::kLse.
// A sink (Config::kSinks) is a logit with no value row: it joins the max and the sum only.
template <class Config, class Params, class Fragment>
CUTE_DEVICE void normalize_rows(Params const& params, OnlineSoftmax<Config> const& softmax,
                                Fragment& acc_o, cuda::CtaWork const& work, int row_base,
                                int lane) {
  float sink_log2 = 0.f;
  if constexpr (Config::kSinks) sink_log2 = __ldg(params.sinks + work.head) * cuda::kLog2e;
  float out_scale[2];
  CUTE_UNROLL
  for (int r = 0; r < 2; ++r) {
    float sum = quad_sum(softmax.row_sum[r]);
    float max_log2 =
        softmax.row_max[r] == -INFINITY ? -INFINITY : softmax.row_max[r] * Config::kExp2Scale;
    if constexpr (Config::kSinks) {
      const float new_max = fmaxf(max_log2, sink_log2);
      const float base = new_max == -INFINITY ? 0.f : new_max;  // a sink of -inf is no sink
      const float rescale = cuda::fast_exp2(max_log2 - base);
      sum = sum * rescale + cuda::fast_exp2(sink_log2 - base);
      max_log2 = new_max;
      out_scale[r] = sum > 0.f ? rescale / sum : 0.f;
    } else {
      out_scale[r] = sum > 0.f ? 1.f / sum : 0.f;  // nothing kept: out = 0
    }
    if constexpr (Config::kLse) {
      // One thread of each quad writes the row's lse; -inf when nothing was kept.
      const int i = row_base + 8 * r;
      if (lane % 4 == 0 && i < Config::kQLen)
        params.lse[(int64_t(work.batch) * Config::kQHeads + work.head) * Config::kQLen + i] =
            sum > 0.f ? (max_log2 + log2f(sum)) * cuda::kLn2 : -INFINITY;
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
  cutlass::NumericArrayConverter<Element, float, kHeadDimV / 2> to_element;
  *reinterpret_cast<cutlass::Array<Element, kHeadDimV / 2>*>(frag_o.data()) =
      to_element(*reinterpret_cast<cutlass::Array<float, kHeadDimV / 2> const*>(acc_o.data()));
  TiledCopy store = make_tiled_copy_C(Copy_Atom<SM90_U32x4_STSM_N, Element>{}, mma_pv);
  ThrCopy thr_store = store.get_thread_slice(thread);
  copy(store, thr_store.retile_S(frag_o), thr_store.partition_D(sO));
  cutlass::arch::fence_view_async_shared();  // generic-proxy writes, read next by the TMA unit
  cutlass::arch::NamedBarrier::sync(128, consumer);
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
