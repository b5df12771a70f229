// The device body of the sm90a backward's main kernel (docs/sm90a-backward.md): one CTA per
// (batch, kv head, kv block), a producer warpgroup (TMA loads) and kDimParts consumer
// warpgroups per 64 kv rows (wgmma, the gradients), split by setmaxnreg. The generated
// file's __global__ entry point calls backward<Config>(params) with its Config and Params.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include "sm90a/backward/consumer.cuh"
#include "sm90a/backward/kernel_traits.cuh"
#include "sm90a/backward/producer.cuh"
#include "sm90a/backward/work.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void backward(Params const& params) {
  using Traits = BackwardTraits<Config>;
  extern __shared__ __align__(1024) uint8_t shared_memory[];
  auto& smem = *reinterpret_cast<typename Traits::SharedStorage*>(shared_memory);
  const BackwardCtaWork work = backward_cta_work<Config>();

  const int warp_group = cutlass::canonical_warp_group_idx();
  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(params.tma.q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.v.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.dout.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.dk.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.dv.get_tma_descriptor());
    using Barrier = cutlass::arch::ClusterBarrier;
    Barrier::init(&smem.kv_full, 1);
    CUTE_UNROLL
    for (int stage = 0; stage < Config::kStages; ++stage) {
      Barrier::init(&smem.q_full[stage], 1);
      Barrier::init(&smem.dout_full[stage], 1);
      Barrier::init(&smem.q_empty[stage], 4 * Config::kConsumers);  // lane 0 of every consumer warp
      Barrier::init(&smem.dout_empty[stage], 4 * Config::kConsumers);
    }
    // No fence.mbarrier_init: no cluster launch, so the __syncthreads below orders the inits
    // before every use, the TMA's included (sm90a/forward/kernel.cuh says why).
  }
  __syncthreads();

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Config::kProducerRegisters>();
    if (cutlass::canonical_warp_idx_sync() == 0 && cute::elect_one_sync())
      produce_backward<Config>(params, smem, work);
  } else {
    cutlass::arch::warpgroup_reg_alloc<Config::kConsumerRegisters>();
    const int consumer = warp_group - 1;
    const int slot = consumer / Config::kDimParts;
    const int part = consumer % Config::kDimParts;
    consume_backward<Config>(params, smem, slot, BackwardColumns<Config>(part), work);
  }
}

}  // namespace sm90a
}  // namespace kgen
