// The MMA warp: the whole warp calls each tcgen05 product (the atom elects one thread to
// issue it) and each tcgen05.commit, which arrives on an mbarrier once every product issued
// before it is done. Per tile t: S(t % 2) = Q K(t)^T, then O += P(t - 1) V(t - 1) once the
// softmax wrote P(t - 1) and the correction warps rescaled O; so the tensor core computes
// the next scores while the softmax works on the last ones. Tiles are counted over the CTA's
// work items (schedule.cuh); the first product of an item's O waits, through P, until the
// correction warps have read the last item's O. One issue site per product: the
// SASS holds head_dim / 16 + block_kv / 16 UTCHMMA (docs/sm100a-kernel.md).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "cuda/ring.cuh"
#include "cuda/work.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/schedule.cuh"
#include "sm100a/forward/sync.cuh"
#include "sm100a/forward/tmem.cuh"

namespace kgen {
namespace sm100a {

template <class Config, class Params>
CUTE_DEVICE void issue_mma(Params const& params,
                           typename ForwardTraits<Config>::SharedStorage& smem,
                           uint32_t tmem_base) {
  using namespace cute;
  using Traits = ForwardTraits<Config>;
  using Element = typename Config::Element;
  using Ring = cuda::RingPosition<Config::kStages>;  // the K/V ring
  using Buffer = cuda::RingPosition<2>;              // S and P alternate over two buffers
  using Once = cuda::RingPosition<1>;                // Q: once per live item

  typename ForwardMma<Config>::QK mma_qk;
  typename ForwardMma<Config>::PV mma_pv;
  ThrMMA thr_qk = mma_qk.get_slice(0);
  ThrMMA thr_pv = mma_pv.get_slice(0);
  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename Traits::SmemLayoutQTile{});
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename Traits::SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename Traits::SmemLayoutV{});
  // Shared-memory descriptors: (mma, 1, k block) and per stage.
  Tensor tSrQ = thr_qk.make_fragment_A(thr_qk.partition_A(sQ));
  Tensor tSrK = thr_qk.make_fragment_B(thr_qk.partition_B(sK));
  Tensor tOrV = thr_pv.make_fragment_B(thr_pv.partition_B(sV));
  // P in tensor memory as the A operand: the fragment of P's shape, at P's columns.
  Tensor sP =
      make_tensor(make_smem_ptr(static_cast<Element*>(nullptr)), typename Traits::LayoutP{});
  Tensor tOrP = thr_pv.make_fragment_A(thr_pv.partition_A(sP));
  const uint32_t p_zero = tOrP.data().get();
  Tensor tStS = tmem_s<Config>(tmem_base);
  Tensor tOtO = tmem_o<Config>(tmem_base + Traits::kTmemO);

  for_each_work_item<Config>(params, [&](cuda::CtaWork const& work, ItemCounts const& at) {
    if (work.tile_count == 0) return;
    wait(&smem.q_full, Once::at(at.live).phase);
    CUTE_NO_UNROLL
    for (int t = 0; t <= work.tile_count; ++t) {
      if (t < work.tile_count) {  // S(g % 2) = Q K(g)^T, g the CTA's tile count
        const int g = at.tiles + t;
        const Ring ring = Ring::at(g);
        const int stage = ring.stage;
        const int buffer = Buffer::at(g).stage;
        wait(&smem.k_full[stage], ring.phase);
        tStS.data() = tmem_base + (buffer == 0 ? Traits::kTmemS0 : Traits::kTmemS1);
        mma_qk.accumulate_ = UMMA::ScaleOut::Zero;
        CUTE_UNROLL
        for (int kb = 0; kb < size<2>(tSrQ); ++kb) {
          gemm(mma_qk, tSrQ(_, _, kb), tSrK(_, _, kb, stage), tStS);
          mma_qk.accumulate_ = UMMA::ScaleOut::One;
        }
        cutlass::arch::umma_arrive(&smem.k_empty[stage]);
        cutlass::arch::umma_arrive(&smem.s_full[buffer]);
      }
      if (t > 0) {  // O += P(u) V(u), u = g - 1; O starts from zero at the item's first tile
        const int u = at.tiles + t - 1;
        const Ring ring = Ring::at(u);
        const Buffer buffer = Buffer::at(u);
        const int stage = ring.stage;
        // Acquire: it takes in the softmax's P and the correction's rescaled O, and passes the
        // correction's read of row_scale on to the next commit on s_full (softmax.cuh).
        wait(&smem.p_full[buffer.stage], buffer.phase);
        wait(&smem.v_full[stage], ring.phase);
        tOrP.data() = p_zero + tmem_base + (buffer.stage == 0 ? Traits::kTmemS0 : Traits::kTmemS1) +
                      Traits::kTmemPOffset;
        mma_pv.accumulate_ = t == 1 ? UMMA::ScaleOut::Zero : UMMA::ScaleOut::One;
        CUTE_UNROLL
        for (int kb = 0; kb < size<2>(tOrP); ++kb) {
          gemm(mma_pv, tOrP(_, _, kb), tOrV(_, _, kb, stage), tOtO);
          mma_pv.accumulate_ = UMMA::ScaleOut::One;
        }
        cutlass::arch::umma_arrive(&smem.v_empty[stage]);
        cutlass::arch::umma_arrive(&smem.o_full);
      }
    }
  });
}

}  // namespace sm100a
}  // namespace kgen
