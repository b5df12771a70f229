// Races between warps on shared memory, by vector clocks (happens-before). Every warp of a
// cluster is an agent (rank * 32 + warp) with a clock of its own; so are each CTA's tensor core
// (tensor_core_agent: the reads of tcgen05.mma operands) and each mbarrier (mbarrier_agent: the
// bytes its copies land). A release (a named-barrier or cluster-barrier arrival, an mbarrier
// arrival, the issue of a copy that will complete_tx an mbarrier, a tcgen05.commit's arrival for
// the tensor core) publishes a clock into the synchronization object and advances the releaser's
// own entry; an acquire (released from a barrier, a try_wait that saw its phase complete) takes
// the object's clock in. Each shared byte keeps its last writer and reader with the agent's own
// clock at the access: a conflicting access by another agent (write after write or read, read
// after write) is ordered only when the accessing warp's clock has caught up with it. Keeping
// one writer and one reader per byte can miss a race; a reported one is real for code that
// synchronizes through barriers and mbarriers. Atomics are exempt.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/lanes.h"
#include "core/machine.h"

namespace kgen::emu {

inline void merge(VectorClock& into, const VectorClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t k = 0; k < from.size(); ++k) into[k] = std::max(into[k], from[k]);
}

// The warp publishes what it did so far into `object`, then moves on to a new epoch.
inline void release(Warp& w, VectorClock& object) {
  merge(object, w.vc);
  ++w.vc[w.agent];
}

inline void acquire(Warp& w, const VectorClock& object) { merge(w.vc, object); }

// An agent's accesses are ordered before the warp's when its clock has caught up with them
// (a clock too short for the agent has seen none of it).
inline bool ordered_before(const Warp& w, uint16_t agent_plus_one, uint32_t stamp) {
  if (agent_plus_one == 0) return true;
  const uint32_t agent = agent_plus_one - 1u;
  return agent < w.vc.size() && w.vc[agent] >= stamp;
}

// Whether the recorded access is the warp's own: the same warp, or for a tensor-core operand
// read (read_by_wgmma) any warp of the same warpgroup of the same CTA.
inline bool own_access(const Warp& w, uint16_t agent_plus_one, bool wgmma) {
  if (agent_plus_one == 0) return true;
  const uint32_t agent = agent_plus_one - 1u;
  if (agent == w.agent) return true;
  return wgmma && agent / 32 == w.agent / 32 && agent % 32 / 4 == w.index / 4;
}

// The agents of a cluster of n CTAs: its warps [0, 32 n), its CTAs' tensor cores [32 n, 33 n),
// then its mbarriers in the order they were initialized (a ShadowByte holds agent + 1 in 16 bits).
inline uint32_t cluster_warp_agents(const Cta& cta) {
  return 32 * static_cast<uint32_t>(cta.cluster ? cta.cluster->ctas.size() : 1);
}
inline uint32_t first_mbarrier_agent(const Cta& cta) { return cluster_warp_agents(cta) / 32 * (32 + 1); }

// The agent that stands for a CTA's tensor core: its tcgen05.mma operand reads of shared memory
// happen after their issue and are published by the mbarrier arrival of a later
// tcgen05.commit.
inline uint32_t tensor_core_agent(const Cta& cta) { return cluster_warp_agents(cta) + cta.rank; }

// A fresh agent for an mbarrier being initialized. Its clock entry counts the phases it
// completed: a copy that lands in phase p writes its bytes at stamp p + 1, which only the
// waiters of that phase (and whoever synchronized with them since) have seen.
inline uint32_t mbarrier_agent(Cta& cta) {
  if (!cta.cluster) return first_mbarrier_agent(cta);  // every CTA runs in a cluster (core/cta_runner.cc)
  return first_mbarrier_agent(cta) + cta.cluster->mbarrier_inits++;
}

// The bytes a copy landed, written on behalf of the mbarrier `b` it completes transaction
// bytes on, in its current phase.
inline void record_copy_write(const MBarrier& b, ShadowByte& s) {
  s.writer = static_cast<uint16_t>(b.agent + 1);
  s.write_stamp = static_cast<uint32_t>(b.phase + 1);
  s.reader = 0;
}

inline std::string agent_name(const Warp& w, uint16_t agent_plus_one, bool wgmma) {
  const uint32_t agent = agent_plus_one - 1u;
  if (agent >= first_mbarrier_agent(*w.cta)) {
    const std::vector<Cta*> one{w.cta};
    for (const Cta* cta : w.cta->cluster ? w.cta->cluster->ctas : one)
      for (const auto& [address, b] : cta->mbarriers)
        if (b.agent == agent)
          return "a copy completing the mbarrier at shared " + hex(address) +
                 (cta != w.cta ? " of cluster CTA rank " + std::to_string(cta->rank) : std::string());
    return "a copy completing an mbarrier since invalidated";
  }
  if (agent >= cluster_warp_agents(*w.cta)) {
    const uint32_t rank = agent - cluster_warp_agents(*w.cta);
    return "the tensor core (a tcgen05.mma operand)" +
           (rank != w.cta->rank ? " of cluster CTA rank " + std::to_string(rank) : std::string());
  }
  std::string name = (wgmma ? "the wgmma of warpgroup " + std::to_string(agent % 32 / 4) : "warp " + std::to_string(agent % 32));
  if (agent / 32 != w.agent / 32) name += " of cluster CTA rank " + std::to_string(agent / 32);
  return name;
}

// Checks an access of one shared byte by `w` (a generic access, or the async proxy's on the
// warp's behalf) against the byte's last accesses by other agents; records a generic one.
// Returns "" or the race.
inline std::string shared_access(Warp& w, ShadowByte& s, bool write, bool record = true) {
  std::string race;
  if (!own_access(w, s.writer, false) && !ordered_before(w, s.writer, s.write_stamp))
    race = std::string(write ? "writes" : "reads") + " what " + agent_name(w, s.writer, false) +
           " wrote with no synchronization between";
  else if (write && !own_access(w, s.reader, s.read_by_wgmma) && !ordered_before(w, s.reader, s.read_stamp))
    race = "overwrites what " + agent_name(w, s.reader, s.read_by_wgmma) + " read with no synchronization between";
  if (!record) return race;
  const uint16_t me = static_cast<uint16_t>(w.agent + 1);
  if (write) {
    s.writer = me;
    s.write_stamp = w.vc[w.agent];
  } else {
    s.reader = me;
    s.read_stamp = w.vc[w.agent];
    s.read_by_wgmma = 0;
  }
  return race;
}

// The async proxy's access on behalf of the issuing warp: a TMA load's destination (which then
// belongs to the copy: its readers synchronize through its mbarrier), a TMA store's or a
// tensor-core operand's source.
inline std::string async_access(Warp& issuer, ShadowByte& s, bool write) {
  const std::string race = shared_access(issuer, s, write, false);
  if (write) s.writer = s.reader = 0;
  return race;
}

// A tensor-core operand read completed on behalf of the warpgroup of `w`.
inline void record_wgmma_read(const Warp& w, ShadowByte& s) {
  s.reader = static_cast<uint16_t>(w.agent + 1);
  s.read_stamp = w.vc[w.agent];
  s.read_by_wgmma = 1;
}

// A tcgen05.mma operand read completed by the CTA's tensor core, whose clock is `tensor_core`
// (entry `agent`): a later write by a warp (or a copy it issues) must have acquired a release
// of that clock from this epoch on, i.e. waited for the mbarrier of a tcgen05.commit issued
// after the MMA.
inline void record_tensor_core_read(uint32_t agent, const VectorClock& tensor_core, ShadowByte& s) {
  s.reader = static_cast<uint16_t>(agent + 1);
  s.read_stamp = tensor_core[agent];
  s.read_by_wgmma = 0;
}

}  // namespace kgen::emu
