// How the roles of the sm100a forward kernel hand tensor memory to each other through
// mbarriers (the waits and arrivals themselves: cuda/mbarrier.cuh).
//
// Each hand-off says one thing. The PTX ISA's memory model gives two ways of ordering tcgen05
// operations across threads (9.7.16.6.3): "the standard memory consistency model
// synchronization mechanisms also apply to the tcgen05 family of instructions", so a
// release/acquire chain (bar.sync, a default-semantics mbarrier arrive observed by an acquiring
// wait, a tcgen05.commit's arrival observed by one) orders them like any memory operation; and
// with .relaxed synchronization, the tcgen05.fence::before/after_thread_sync pair around it does
// (the canonical patterns of 9.7.16.6.4). A fence pair on top of release/acquire orders nothing
// more, so:
//   * wait / arrive_per_warp: release/acquire, no tcgen05 fence. Every hand-off that also
//     orders shared memory uses them, whatever tensor memory it carries too.
//   * wait_relaxed_for_tmem: a .relaxed wait and tcgen05.fence::after_thread_sync, for a
//     hand-off that orders tensor memory only (its arrival is a tcgen05.commit, whose
//     completion stands for the issuer's before_thread_sync).
// Which barrier is which, and why: docs/sm100a-kernel.md, "Shared memory and barriers".
#pragma once

#include <cstdint>

#include <cuda/ptx>
#include <cute/config.hpp>

#include "cuda/mbarrier.cuh"

namespace kgen {
namespace sm100a {

using cuda::arrive_per_warp;
using cuda::wait;

// cuda::wait made .relaxed, for a tcgen05.commit whose products this thread's next tcgen05
// operations use: it orders nothing by itself, tcgen05.fence::after_thread_sync orders those
// operations after the commit's completion (PTX ISA 9.7.16.6.4, "pipelined instructions in
// different threads"). Use it only where no shared-memory access depends on the hand-off.
CUTE_DEVICE void wait_relaxed_for_tmem(uint64_t* barrier, uint32_t parity) {
  namespace ptx = ::cuda::ptx;
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_relaxed, ptx::scope_cta, barrier, parity)) {
  }
  ptx::tcgen05_fence_after_thread_sync();
}

}  // namespace sm100a
}  // namespace kgen
