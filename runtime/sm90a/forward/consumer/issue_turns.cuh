// Ping-pong of two consumer warpgroups (FlashAttention-3's scheduling barriers): they take
// turns to issue their GEMMs, so that while one issues S = Q K^T and O += P V the other runs
// its softmax, and the tensor cores see one warpgroup's products after the other's instead of
// both at once. A turn is a named barrier per consumer (cuda/named_barriers.cuh: set c) of
// 2 x 128 threads: consumer c's own, and the arrival of the other consumer, which passes the
// turn on once it has issued. Both consumers of a CTA walk the same tiles, so each takes as
// many turns as the other; the first turn is consumer 0's (consumer 1 hands it over before
// either takes one), and the last hand-over is never taken. Performance only: the numerics do
// not depend on the order of the turns.
#pragma once

#include <cute/config.hpp>

#include "cuda/named_barriers.cuh"

namespace kgen {
namespace sm90a {

// Config::kPingPong: the plan's choice (with two consumers); without it, no code at all.
template <class Config>
struct IssueTurns {
  static constexpr bool kPingPong = Config::kPingPong;
  static constexpr int kThreads = 2 * 128;
  static_assert(!kPingPong || Config::kConsumers == 2, "turns between two consumers");

  // Before the first turn of either consumer.
  CUTE_DEVICE static void start(int consumer) {
    if constexpr (kPingPong) {
      if (consumer == 1) cuda::arrive_warpgroup_set(0, kThreads);
    }
  }
  CUTE_DEVICE static void wait_turn(int consumer) {
    if constexpr (kPingPong) cuda::sync_warpgroup_set(consumer, kThreads);
  }
  CUTE_DEVICE static void pass_turn(int consumer) {
    if constexpr (kPingPong) cuda::arrive_warpgroup_set(1 - consumer, kThreads);
  }
};

}  // namespace sm90a
}  // namespace kgen
