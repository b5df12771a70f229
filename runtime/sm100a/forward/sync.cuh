// How the roles of the sm100a forward kernel hand tensor memory to each other through
// mbarriers (the waits and arrivals themselves: cuda/mbarrier.cuh).
//
// A hand-off of tensor memory between threads is bracketed by the fences the PTX ISA's
// tcgen05 memory model asks for: tcgen05.fence::before_thread_sync on the side whose
// tcgen05.ld/st must be done before it arrives, tcgen05.fence::after_thread_sync on the side
// that waited, before its next tcgen05 operation. CCCL's cuda::ptx spells both (CUTLASS 4.2
// has neither).
#pragma once

#include <cstdint>

#include <cuda/ptx>
#include <cute/config.hpp>

#include "cuda/mbarrier.cuh"

namespace kgen {
namespace sm100a {

using cuda::arrive_per_warp;
using cuda::wait;

// A wait whose next operation is a tcgen05 one on what another thread wrote, read or issued.
CUTE_DEVICE void wait_for_tmem(uint64_t* barrier, uint32_t parity) {
  wait(barrier, parity);
  ::cuda::ptx::tcgen05_fence_after_thread_sync();
}

// One arrival per warp after the warp's tensor-memory loads and stores (each already waited
// for with tcgen05.wait::ld/st) are done.
CUTE_DEVICE void arrive_per_warp_after_tmem(uint64_t* barrier) {
  ::cuda::ptx::tcgen05_fence_before_thread_sync();
  arrive_per_warp(barrier);
}

}  // namespace sm100a
}  // namespace kgen
