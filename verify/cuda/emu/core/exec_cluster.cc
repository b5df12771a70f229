// Thread-block clusters: mapa (a shared::cta address of the executing CTA -> the same offset in
// a peer CTA's shared memory, in the shared::cluster encoding of memory.h) and the cluster
// barrier barrier.cluster.arrive{.release,.relaxed}{.aligned} / barrier.cluster.wait{.acquire}
// {.aligned}. Each thread arrives once per phase and waits for the phase it arrived in; a phase
// completes when every non-exited thread of the cluster arrived (PTX ISA, barrier.cluster).
// Arriving twice without a wait, or waiting without an arrival, is reported.
// An arrival releases what the warp did (core/races.h) unless it is .relaxed: then only a
// fence.{sc,acq_rel,release} before it makes it a release, and a fence.mbarrier_init before it
// releases the mbarrier inits of the warp alone (PTX ISA, membar/fence: "Release local barrier
// state via generic proxy: mbarrier.init; fence.mbarrier_init.release.cluster;
// barrier.cluster.arrive.relaxed").
#include <sstream>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/races.h"

namespace kgen::emu {
namespace {

// mapa{.shared::cluster}.{u32,u64} d, a, rank
Step run_mapa(Warp& w, const Decoded& d, uint32_t mask) {
  const Cluster& cluster = *w.cta->cluster;
  const bool generic = d.space == ptx::Space::none;
  for_each_lane(mask, [&](int lane) {
    uint64_t a = w.get(op(d, 1), lane, d);
    const uint64_t rank = w.get(op(d, 2), lane, d);
    if (rank >= cluster.ctas.size())
      w.fail(d, "mapa to CTA rank " + std::to_string(rank) + " of a cluster of " + std::to_string(cluster.ctas.size()),
             lane);
    if (generic) {
      if (window_of(a) != Window::shared) w.fail(d, "mapa of generic address " + hex(a) + ", which is not shared memory", lane);
      a -= kSharedWindow;
    }
    if (a > 0xffffffffull) w.fail(d, "mapa of shared address " + hex(a) + ", which is out of range", lane);
    uint64_t mapped = cluster_shared_address(static_cast<uint32_t>(rank), static_cast<uint32_t>(a));
    if (generic) mapped += kSharedWindow;
    w.set(op(d, 0), lane, mapped, d);
  });
  return Step::next;
}

Step run_cluster_arrive(Warp& w, const Decoded& d, uint32_t mask) {
  if (d.mode2 && mask != w.live()) w.fail(d, "barrier.cluster.arrive.aligned executed by a diverged warp");
  if (w.cluster_unwaited & mask)
    w.fail(d, "arrives at the cluster barrier again without a barrier.cluster.wait since its last arrival",
           __builtin_ctz(w.cluster_unwaited & mask));
  Cluster& cluster = *w.cta->cluster;
  w.cluster_arrived |= mask;
  w.cluster_unwaited |= mask;
  w.cluster_wait_generation = cluster.barrier_generation + 1;
  if (!d.mode || w.release_fenced) {
    release(w, cluster.barrier_arrivals);
  } else {
    for (auto& [address, b] : w.cta->mbarriers)
      if (b.init_agent == w.agent && b.fenced && !b.init_released_phase) b.init_released_phase = w.cluster_wait_generation;
  }
  w.release_fenced = false;
  cluster.try_complete_barrier();
  return Step::next;
}

Step run_cluster_wait(Warp& w, const Decoded& d, uint32_t mask) {
  if (d.mode2 && mask != w.live()) w.fail(d, "barrier.cluster.wait.aligned executed by a diverged warp");
  if (const uint32_t missing = mask & ~w.cluster_unwaited)
    w.fail(d, "waits at the cluster barrier without arriving first (barrier.cluster.arrive)", __builtin_ctz(missing));
  w.cluster_unwaited &= ~mask;
  if (w.cta->cluster->barrier_generation < w.cluster_wait_generation) {
    w.wait = Wait{Wait::Kind::cluster_barrier, 0, w.cluster_wait_generation, 0};  // the runner acquires on release
  } else {
    acquire(w, w.cta->cluster->barrier_completed);
    w.cluster_acquired = w.cluster_wait_generation;
  }
  return Step::next;
}

}  // namespace

Cta* Cluster::owner(Cta& executing, uint32_t address) const {
  (void)executing;  // shared addresses name their CTA by rank (memory.h), the executing one too
  const int rank = shared_rank(address);
  if (static_cast<size_t>(rank) >= ctas.size()) return nullptr;
  return ctas[static_cast<size_t>(rank)];
}

bool Cluster::try_complete_barrier() {
  bool any = false;
  for (Cta* cta : ctas)
    for (Warp& w : cta->warps) {
      if (w.live() & ~w.cluster_arrived) return false;
      any |= w.cluster_arrived != 0;
    }
  if (!any) return false;
  for (Cta* cta : ctas)
    for (Warp& w : cta->warps) w.cluster_arrived = 0;
  // Its waiters acquire what every arrival released (races.h).
  barrier_completed = barrier_arrivals;
  barrier_arrivals.assign(barrier_arrivals.size(), 0);
  ++barrier_generation;
  return true;
}

void decode_cluster(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (in.parts[0] == "mapa") {
    d.space = m.space;
    d.type = m.last_type();
    if (d.type != Type::u32 && d.type != Type::u64) throw Unsupported{"type"};
    d.run = run_mapa;
    return;
  }
  // barrier.cluster.{arrive,wait}: memory-order qualifiers order nothing more in a sequential
  // emulator.
  d.mode2 = m.has("aligned");
  d.mode = m.has("relaxed");
  for (const std::string& w : m.words)
    if (w != "cluster" && w != "arrive" && w != "wait" && w != "aligned" && w != "release" && w != "relaxed" &&
        w != "acquire")
      throw Unsupported{"modifier ." + w};
  if (m.has("arrive")) d.run = run_cluster_arrive;
  else if (m.has("wait")) d.run = run_cluster_wait;
  else throw Unsupported{"barrier.cluster form"};
}

}  // namespace kgen::emu
