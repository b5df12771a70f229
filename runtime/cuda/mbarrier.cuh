// Waits and arrivals on the mbarriers every CUDA kernel hands work over with.
//
// wait() is also a compiler memory barrier (CUTLASS's ClusterBarrier::wait is not), so a
// plain shared-memory read after it (the sm100a rescale factors) cannot be hoisted above it.
#pragma once

#include <cstdint>

#include <cuda/ptx>
#include <cute/config.hpp>
#include <cutlass/arch/barrier.h>

namespace kgen {
namespace cuda {

// Blocks until the phase of `barrier` with parity `parity` has completed; an acquire (the
// default semantics of mbarrier.try_wait).
CUTE_DEVICE void wait(uint64_t* barrier, uint32_t parity) {
  while (!::cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

// One arrival per warp (its lane 0), once every lane of it is here: a release, so the warp's
// reads of what the barrier guards, its shared-memory writes and (PTX ISA 9.7.16.6.3) its
// tensor-memory loads and stores, each already waited for with tcgen05.wait::ld/st, are
// ordered before what the waiter does next.
// Barriers a warp releases this way count one arrival per warp. `lane`: the thread's lane,
// computed once by a caller that releases inside its main loop (the sm90a consumers). Reading
// %tid.x again at each release made the sm90a backward of tests/cuda/specs/sm90a_per_head_mqa
// spill 4 bytes at its 168-register limit; with the lane computed before the loop it spills
// none, as before this header existed.
CUTE_DEVICE void arrive_per_warp(uint64_t* barrier, int lane) {
  __syncwarp();
  if (lane == 0) cutlass::arch::ClusterBarrier::arrive(barrier);
}

CUTE_DEVICE void arrive_per_warp(uint64_t* barrier) {
  arrive_per_warp(barrier, int(threadIdx.x % 32));
}

}  // namespace cuda
}  // namespace kgen
