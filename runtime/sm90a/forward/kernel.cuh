// The device body of the sm90a forward kernel (docs/sm90a-kernel.md): one CTA per (batch,
// q head, q block), a producer warpgroup (TMA loads) and 1 to 3 consumer warpgroups (wgmma
// and the softmax), split by setmaxnreg. The generated file's __global__ entry point calls
// forward<Config>(params) with its Config and Params.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include "cuda/work.cuh"
#include "sm90a/forward/consumer/mainloop.cuh"
#include "sm90a/forward/kernel_traits.cuh"
#include "sm90a/forward/producer.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void forward(Params const& params) {
  using Traits = ForwardTraits<Config>;
  extern __shared__ __align__(1024) uint8_t shared_memory[];
  auto& smem = *reinterpret_cast<typename Traits::SharedStorage*>(shared_memory);
  const cuda::CtaWork work = cuda::cta_work<Config>(params);

  const int warp_group = cutlass::canonical_warp_group_idx();
  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(params.tma.q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.v.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.o.get_tma_descriptor());
    using Barrier = cutlass::arch::ClusterBarrier;
    Barrier::init(&smem.q_full, 1);
    CUTE_UNROLL
    for (int stage = 0; stage < Config::kStages; ++stage) {
      Barrier::init(&smem.k_full[stage], 1);
      Barrier::init(&smem.v_full[stage], 1);
      Barrier::init(&smem.k_empty[stage], 4 * Config::kConsumers);  // lane 0 of every consumer warp
      Barrier::init(&smem.v_empty[stage], 4 * Config::kConsumers);
    }
    // No fence.mbarrier_init: the kernel is launched without clusters, so only this CTA's
    // threads and its own TMA copies use these barriers, and __syncthreads below orders the inits
    // before every use. A copy "accesses its mbarrier operand using generic-proxy" (PTX ISA,
    // cp.async.bulk.tensor), so no proxy fence is needed either; fence.mbarrier_init would only
    // release the inits to other CTAs of a cluster.
  }
  __syncthreads();

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Config::kProducerRegisters>();
    if (cutlass::canonical_warp_idx_sync() == 0 && cute::elect_one_sync())
      produce<Config>(params, smem, work);
  } else {
    cutlass::arch::warpgroup_reg_alloc<Config::kConsumerRegisters>();
    consume<Config>(params, smem, warp_group - 1, work);
  }
}

}  // namespace sm90a
}  // namespace kgen
