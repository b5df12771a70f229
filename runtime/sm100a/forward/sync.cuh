// How the roles of the sm100a forward kernel hand work to each other through mbarriers.
//
// A wait here is also a compiler memory barrier (CUTLASS's ClusterBarrier::wait is not), so a
// plain shared-memory read after it (the rescale factors) cannot be hoisted above it. And a
// hand-off of tensor memory between threads is bracketed by the fences the PTX ISA's tcgen05
// memory model asks for: tcgen05.fence::before_thread_sync on the side whose tcgen05.ld/st
// must be done before it arrives, tcgen05.fence::after_thread_sync on the side that waited,
// before its next tcgen05 operation. CCCL's cuda::ptx spells both (CUTLASS 4.2 has neither).
#pragma once

#include <cstdint>

#include <cuda/ptx>
#include <cute/config.hpp>
#include <cutlass/arch/barrier.h>

namespace kgen {
namespace sm100a {

// Blocks until the phase of `barrier` with parity `parity` has completed.
CUTE_DEVICE void wait(uint64_t* barrier, uint32_t parity) {
  while (!::cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

// A wait whose next operation is a tcgen05 one on what another thread wrote, read or issued.
CUTE_DEVICE void wait_for_tmem(uint64_t* barrier, uint32_t parity) {
  wait(barrier, parity);
  ::cuda::ptx::tcgen05_fence_after_thread_sync();
}

// One arrival per warp (its lane 0), once every lane of it is here: its shared-memory writes
// are then ordered before the arrival.
CUTE_DEVICE void arrive_per_warp(uint64_t* barrier) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) cutlass::arch::ClusterBarrier::arrive(barrier);
}

// The same, after the warp's tensor-memory loads and stores (each already waited for with
// tcgen05.wait::ld/st) are done.
CUTE_DEVICE void arrive_per_warp_after_tmem(uint64_t* barrier) {
  ::cuda::ptx::tcgen05_fence_before_thread_sync();
  arrive_per_warp(barrier);
}

}  // namespace sm100a
}  // namespace kgen
