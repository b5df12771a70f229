// The device body of the sm90a decode kernel (docs/decode.md, "The sm90a kernel"): one CTA per
// (split x q tile, kv head, batch), a producer warpgroup (TMA loads of K and V) and one consumer
// warpgroup (the q tile, wgmma, the softmax and the stores), split by setmaxnreg. It reuses the
// forward's traits, shared storage, wgmma products and online softmax (sm90a/forward/) and the
// CUDA runtime's ring, mask view, row finish and conversion (cuda/); what is its own is the walk
// over a sequence's live blocks, the page lookup and the epilogue of partials. The generated
// file's __global__ entry point calls decode<Config>(params).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include "decode/sm90a/consumer.cuh"
#include "decode/sm90a/producer.cuh"
#include "decode/sm90a/work.cuh"
#include "sm90a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm90a {

template <class Config, class Params>
CUTE_DEVICE void decode(Params const& params) {
  using Traits = ForwardTraits<Config>;
  static_assert(Config::kConsumers == 1, "one consumer warpgroup per q tile of 64 rows");
  extern __shared__ __align__(1024) uint8_t shared_memory[];
  auto& smem = *reinterpret_cast<typename Traits::SharedStorage*>(shared_memory);
  const DecodeWork work = decode_work<Config>(params);

  const int warp_group = cutlass::canonical_warp_group_idx();
  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(params.tma.k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.v.get_tma_descriptor());
    using Barrier = cutlass::arch::ClusterBarrier;
    CUTE_UNROLL
    for (int stage = 0; stage < Config::kStages; ++stage) {
      Barrier::init(&smem.k_full[stage], 1);
      Barrier::init(&smem.v_full[stage], 1);
      Barrier::init(&smem.k_empty[stage], 4);  // lane 0 of every consumer warp
      Barrier::init(&smem.v_empty[stage], 4);
    }
    // No fence.mbarrier_init: no cluster launch (sm90a/forward/kernel.cuh says why).
  }
  __syncthreads();

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Config::kProducerRegisters>();
    if (cutlass::canonical_warp_idx_sync() == 0 && cute::elect_one_sync())
      produce_decode<Config>(params, smem, work);
  } else {
    cutlass::arch::warpgroup_reg_alloc<Config::kConsumerRegisters>();
    consume_decode<Config>(params, smem, work, warp_group);
  }
}

}  // namespace sm90a
}  // namespace kgen
