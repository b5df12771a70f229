// Races between warps on shared memory, by vector clocks (happens-before). Every warp of a
// cluster is an agent (rank * 32 + warp) with a clock of its own; a release (a named-barrier or
// cluster-barrier arrival, an mbarrier arrival, the issue of a copy that will complete_tx an
// mbarrier) publishes the warp's vector clock into the synchronization object and advances its
// own entry; an acquire (released from a barrier, a try_wait that saw its phase complete) takes
// the object's clock in. Each shared byte keeps its last generic writer and reader with the
// writer's own clock at the access: a conflicting access by another agent (write after write or
// read, read after write) is ordered only when the accessing warp's clock has caught up with it.
// Keeping one writer and one reader per byte can miss a race; a reported one is real for code
// that synchronizes through barriers and mbarriers. Atomics are exempt.
#pragma once

#include <algorithm>
#include <string>

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

// An agent's accesses are ordered before the warp's when its clock has caught up with them.
inline bool ordered_before(const Warp& w, uint16_t agent_plus_one, uint32_t stamp) {
  return agent_plus_one == 0 || w.vc[agent_plus_one - 1u] >= stamp;
}

// Whether the recorded access is the warp's own: the same warp, or for a tensor-core operand
// read (read_by_wgmma) any warp of the same warpgroup of the same CTA.
inline bool own_access(const Warp& w, uint16_t agent_plus_one, bool wgmma) {
  if (agent_plus_one == 0) return true;
  const uint32_t agent = agent_plus_one - 1u;
  if (agent == w.agent) return true;
  return wgmma && agent / 32 == w.agent / 32 && agent % 32 / 4 == w.index / 4;
}

inline std::string agent_name(const Warp& w, uint16_t agent_plus_one, bool wgmma) {
  const uint32_t agent = agent_plus_one - 1u;
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

}  // namespace kgen::emu
