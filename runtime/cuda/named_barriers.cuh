// The named barriers (bar.sync with a thread count) of every CUDA kernel of kgen, by one rule.
// Ids are CUTLASS's user ids: cutlass::arch::NamedBarrier adds ReservedNamedBarrierCount (8),
// so hardware ids 8-15 are ours, never barrier 0 of __syncthreads and never one of the ids
// CUTLASS reserves for its own collectives. Within a kernel:
//   warpgroup w's own barrier (its 128 threads)            id w
//   a set s of warpgroups' barrier (the sm90a backward's   id kWarpgroupSetBarrier0 + s
//   consumers of one kv slot; the sm90a forward's turn of
//   consumer s to issue its GEMMs: sm90a/forward/consumer/
//   issue_turns.cuh)
// Barriers belong to a CTA, so kernels reuse the same ids.
#pragma once

#include <cstdint>

#include <cute/config.hpp>
#include <cutlass/arch/barrier.h>

namespace kgen {
namespace cuda {

enum NamedBarrierId : uint32_t {
  kWarpgroupBarrier0 = 0,     // + w: warpgroup w's own
  kWarpgroupSetBarrier0 = 4,  // + s: a set of warpgroups'
  kNamedBarrierIds = 8,       // CUTLASS's user ids 0-7 are hardware ids 8-15
};

// A kernel's CTA has at most this many warpgroups (512 threads), and at most this many sets:
// every kernel's traits hold it to that.
constexpr int kMaxWarpgroups = kWarpgroupSetBarrier0 - kWarpgroupBarrier0;
constexpr int kMaxWarpgroupSets = kNamedBarrierIds - kWarpgroupSetBarrier0;

// Waits until the 128 threads of warpgroup `warp_group` (its canonical index) are here.
CUTE_DEVICE void sync_warpgroup(int warp_group) {
  cutlass::arch::NamedBarrier::sync(128, kWarpgroupBarrier0 + uint32_t(warp_group));
}

// Waits until the `threads` threads of warpgroup set `set` are here.
CUTE_DEVICE void sync_warpgroup_set(int set, int threads) {
  cutlass::arch::NamedBarrier::sync(uint32_t(threads), kWarpgroupSetBarrier0 + uint32_t(set));
}

// Arrives at warpgroup set `set`'s barrier of `threads` threads without waiting.
CUTE_DEVICE void arrive_warpgroup_set(int set, int threads) {
  cutlass::arch::NamedBarrier::arrive(uint32_t(threads), kWarpgroupSetBarrier0 + uint32_t(set));
}

}  // namespace cuda
}  // namespace kgen
