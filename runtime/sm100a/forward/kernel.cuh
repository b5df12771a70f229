// The device body of the sm100a forward kernel (docs/sm100a-kernel.md): persistent CTAs, each
// walking its share of the (batch, q head, q block of 128 rows) work items (schedule.cuh),
// and three warpgroups with fixed roles, split by setmaxnreg:
//   warps 0-3   softmax: one thread per q row, S from tensor memory, P back into it
//   warps 4-7   correction: rescales O in tensor memory when a row max rose; the epilogues
//   warp 8      MMA: one thread issues every tcgen05.mma; owns the tensor-memory allocation
//   warp 9      load: one thread issues every TMA load (Q, then the K/V ring)
//   warps 10-11 idle
// Softmax and correction must be whole warpgroups: warp w reaches tensor-memory lanes
// 32 (w % 4) .. 32 (w % 4) + 31 only. The generated file's __global__ entry point calls
// forward<Config>(params) with its Config and Params.
#pragma once

#include <cstdint>

#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include "sm100a/forward/correction.cuh"
#include "sm100a/forward/kernel_traits.cuh"
#include "sm100a/forward/load.cuh"
#include "sm100a/forward/mma.cuh"
#include "sm100a/forward/softmax.cuh"
#include "sm100a/forward/sync.cuh"

namespace kgen {
namespace sm100a {

// The first warp of each role (the table above); warps 0-3 are the softmax warpgroup.
enum Warp : int { kCorrectionWarp0 = 4, kMmaWarp = 8, kLoadWarp = 9 };
static_assert(kCorrectionWarp0 == 4 * kCorrectionWarpgroup, "correction.cuh's warpgroup");

template <class Config, class Params>
CUTE_DEVICE void forward(Params const& params) {
  using Traits = ForwardTraits<Config>;
  using Barrier = cutlass::arch::ClusterBarrier;
  extern __shared__ __align__(1024) uint8_t shared_memory[];
  auto& smem = *reinterpret_cast<typename Traits::SharedStorage*>(shared_memory);
  // Warp-uniform (a shuffle broadcast): the MMA and TMEM instructions are warp collectives,
  // and a divergent role test would make ptxas emit a second, serialized copy of them.
  const int warp = cutlass::canonical_warp_idx_sync();

  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(params.tma.q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.v.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma.o.get_tma_descriptor());
    Barrier::init(&smem.q_full, 1);
    Barrier::init(&smem.q_empty, 1);  // the correction thread that stored the item's O
    CUTE_UNROLL
    for (int stage = 0; stage < Config::kStages; ++stage) {
      Barrier::init(&smem.k_full[stage], 1);
      Barrier::init(&smem.v_full[stage], 1);
      Barrier::init(&smem.k_empty[stage], 1);  // tcgen05.commit of the MMA thread
      Barrier::init(&smem.v_empty[stage], 1);
    }
    CUTE_UNROLL
    for (int slot = 0; slot < 2; ++slot) {
      Barrier::init(&smem.s_full[slot], 1);
      Barrier::init(&smem.scale_full[slot], 4);  // lane 0 of each softmax warp
      Barrier::init(&smem.p_full[slot], 8);      // ... and of each correction warp
    }
    Barrier::init(&smem.o_full, 1);
    Barrier::init(&smem.out_scale_full, 4);
    // No fence.mbarrier_init: no cluster launch, so the __syncthreads below orders the inits
    // before every use, the TMA's included (sm90a/forward/kernel.cuh says why).
  }
  cute::TMEM::Allocator1Sm tmem;
  if (warp == kMmaWarp) tmem.allocate(Config::kTmemColumns, &smem.tmem_base);
  // The barriers and the tensor-memory address are visible to every warp. No tcgen05 fence
  // pair around it: bar.sync is a CTA-scope release/acquire, which orders tcgen05 operations
  // like any other (PTX ISA 9.7.16.6.3); tcgen05.alloc's store of the address is a weak
  // generic store (PTX ISA, tcgen05.alloc) that it orders before the loads below.
  __syncthreads();
  const uint32_t tmem_base = smem.tmem_base;

  // Each role walks the work items itself, after its register split: a value live across
  // setmaxnreg must fit every role's share, and ptxas spills it instead.
  if (warp < kCorrectionWarp0) {
    cutlass::arch::warpgroup_reg_alloc<Config::kSoftmaxRegisters>();
    softmax<Config>(params, smem, tmem_base);
  } else if (warp < kMmaWarp) {
    cutlass::arch::warpgroup_reg_dealloc<Config::kCorrectionRegisters>();
    correct_and_store<Config>(params, smem, tmem_base);
  } else {
    cutlass::arch::warpgroup_reg_dealloc<Config::kOtherRegisters>();
    if (warp == kMmaWarp) issue_mma<Config>(params, smem, tmem_base);
    if (warp == kLoadWarp && cute::elect_one_sync()) load<Config>(params, smem);
  }

  // Every tensor-memory load and store is done (each warp waited for its own with
  // tcgen05.wait::ld/st) and every product too (the correction warps waited for the last
  // commit); the barrier's release/acquire orders them before the free (PTX ISA 9.7.16.6.3),
  // so no tcgen05 fence pair is needed around it.
  __syncthreads();
  if (warp == kMmaWarp) {
    tmem.release_allocation_lock();
    tmem.free(tmem_base, Config::kTmemColumns);
  }
}

}  // namespace sm100a
}  // namespace kgen
