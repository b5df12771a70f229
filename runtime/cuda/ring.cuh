// Where a use of an mbarrier-guarded ring falls: every ring of kgen's CUDA kernels (the K/V
// and Q/dO rings in shared memory, the sm100a S/P buffers and its single hand-off barriers) is
// used in order, so the count-th use (from 0) names its stage and the barrier phase it waits
// for. This is the one place that arithmetic is written.
#pragma once

#include <cstdint>

#include <cute/config.hpp>

namespace kgen {
namespace cuda {

template <int kStages>
struct RingPosition {
  static_assert(kStages >= 1, "a ring has at least one stage");

  int stage;
  // The parity of the barrier phases this use completes: its "full" phase (what a consumer
  // of the use waits for) and the "empty" phase its release completes (what a drain waits
  // for).
  uint32_t phase;

  // The count-th use of the ring: stage count % kStages, in round count / kStages. A ring of
  // one stage is a single barrier reused: its phase is count & 1.
  CUTE_HOST_DEVICE static RingPosition at(int count) {
    return RingPosition{count % kStages, uint32_t((count / kStages) & 1)};
  }

  // The parity whoever refills the stage waits for on its "empty" barrier: one round behind.
  // A fresh barrier counts as having completed the phase of parity 1, so the first round
  // does not wait.
  CUTE_HOST_DEVICE uint32_t empty_phase() const { return phase ^ 1u; }
};

}  // namespace cuda
}  // namespace kgen
