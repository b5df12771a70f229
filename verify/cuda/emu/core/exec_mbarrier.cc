// mbarrier.init/inval/arrive/arrive_drop/expect_tx/complete_tx/try_wait/test_wait: phases
// complete when every expected arrival came and the transaction count is back to zero. A
// try_wait that fails makes the warp yield until the phase changes (a spin is a wait), and it
// also fails spuriously now and then, as the ISA allows, so kernels must loop.
#include <algorithm>
#include <sstream>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/mbarrier.h"
#include "core/races.h"

namespace kgen::emu {
namespace {

// A phase completes when every arrival came and no transaction byte is outstanding; its
// waiters acquire what its arrivals released (races.h). Returns "" or, when copies that signal
// this mbarrier are still in flight, what is wrong: their bytes were never expected.
std::string complete_phase_if_done(MBarrier& b) {
  if (b.pending != 0 || b.tx != 0) return "";
  if (b.copies_in_flight)
    return "the mbarrier (initialized at PTX line " + std::to_string(b.init_line) + ") completes a phase while " +
           std::to_string(b.copies_in_flight) +
           " copies that complete_tx it are still in flight: its expect_tx is missing or too small";
  ++b.phase;
  b.pending = b.expected;
  b.completed = b.arrivals;
  // Its waiters have seen the bytes its copies landed up to this phase (races.h).
  if (b.completed.size() <= b.agent) b.completed.resize(b.agent + 1, 0);
  b.completed[b.agent] = std::max<uint32_t>(b.completed[b.agent], static_cast<uint32_t>(b.phase));
  b.arrivals.assign(b.arrivals.size(), 0);
  return "";
}

uint32_t address_of(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  uint64_t a = w.address(o, lane, d);
  if (d.space == ptx::Space::none) {
    if (window_of(a) != Window::shared) w.fail(d, "mbarrier operand is not a shared address", lane);
    a -= kSharedWindow;
  }
  return static_cast<uint32_t>(a);
}

// init, inval and the waits name the executing CTA's own mbarriers (.shared::cta): the
// operand's shared address, checked to name the executing CTA (memory.h).
uint32_t own_address_of(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  const uint32_t a = address_of(w, d, o, lane);
  const int rank = shared_rank(a);
  if (static_cast<uint32_t>(rank) != w.cta->rank)
    w.fail(d, "names the mbarrier at shared " + hex(shared_offset(a)) + " of cluster CTA rank " + std::to_string(rank) +
                  ": only arrive, expect_tx and complete_tx may act on a peer CTA's mbarrier",
           lane);
  return a;
}

Step run_init(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  for_each_lane(mask, [&](int lane) {
    const uint32_t address = own_address_of(w, d, op(d, 0), lane);
    const uint32_t a = shared_offset(address);  // its key: the offset in the CTA's shared memory
    const uint64_t count = w.get(op(d, 1), lane, d);
    if (a % 8) w.fail(d, "mbarrier object at " + hex(a) + " is not 8-byte aligned", lane);
    // Bounds and pending asynchronous writes, as a generic write of the 8 bytes would see them.
    w.access(ptx::Space::shared, address, 8, true, lane, d);
    if (cta.mbarriers.count(a)) w.fail(d, "mbarrier at " + hex(a) + " initialized twice without mbarrier.inval", lane);
    if (count == 0 || count >= (1u << 20)) w.fail(d, "mbarrier count " + std::to_string(count) + " is out of range", lane);
    MBarrier b;
    b.expected = static_cast<uint32_t>(count);
    b.pending = static_cast<int64_t>(count);
    b.init_line = d.in->line;
    b.init_agent = w.agent;
    b.init_stamp = w.vc[w.agent];
    b.agent = mbarrier_agent(cta);
    cta.mbarriers[a] = b;
    for (uint32_t k = 0; k < 8; ++k) cta.smem.shadow[a + k].mbarrier = 1;
  });
  return Step::next;
}

Step run_inval(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const uint32_t address = own_address_of(w, d, op(d, 0), lane);
    mbarrier_at(w, d, address);
    const uint32_t a = shared_offset(address);
    w.cta->mbarriers.erase(a);
    for (uint32_t k = 0; k < 8; ++k) w.cta->smem.shadow[a + k].mbarrier = 0;
  });
  return Step::next;
}

// mbarrier.arrive{.expect_tx}{.noComplete}... state|_, [a]{, count or tx}
Step run_arrive(Warp& w, const Decoded& d, uint32_t mask) {
  const bool expect = d.mode == 1, drop = d.mode2 == 1;
  for_each_lane(mask, [&](int lane) {
    const uint32_t a = address_of(w, d, op(d, 1), lane);
    const uint64_t phase = mbarrier_at(w, d, a).phase;
    uint32_t count = 1;
    if (expect) mbarrier_expect_tx(w, d, a, static_cast<uint32_t>(w.get(op(d, 2), lane, d)));
    else if (d.in->operands.size() > 2) count = static_cast<uint32_t>(w.get(op(d, 2), lane, d));
    if (drop) {
      MBarrier& b = mbarrier_at(w, d, a);
      if (b.expected < count) w.fail(d, "arrive_drop below zero expected arrivals", lane);
      b.expected -= count;
    }
    mbarrier_arrive(w, d, a, count);
    w.set(op(d, 0), lane, phase, d);  // the state token: the phase it arrived in
  });
  return Step::next;
}

Step run_expect_tx(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    mbarrier_expect_tx(w, d, address_of(w, d, op(d, 0), lane), static_cast<uint32_t>(w.get(op(d, 1), lane, d)));
  });
  return Step::next;
}

Step run_complete_tx(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const uint32_t a = address_of(w, d, op(d, 0), lane);
    mbarrier_at(w, d, a);
    VectorClock released;
    release(w, released);
    mbarrier_complete_tx(mbarrier_owner(w, d, a), shared_offset(a), static_cast<uint32_t>(w.get(op(d, 1), lane, d)),
                         released, w.where(d, lane));
  });
  return Step::next;
}

// try_wait{.parity} p, [a], parity|state{, hint}; test_wait likewise without blocking.
Step run_wait(Warp& w, const Decoded& d, uint32_t mask) {
  const bool parity = d.mode == 1, blocking = d.mode2 == 0;
  bool reported_false = false;
  Wait park;
  for_each_lane(mask, [&](int lane) {
    const uint32_t address = own_address_of(w, d, op(d, 1), lane);
    const uint32_t a = shared_offset(address);  // the warp parks on the CTA's mbarrier at a
    const MBarrier& b = mbarrier_at(w, d, address);
    const uint64_t operand = w.get(op(d, 2), lane, d);
    // .parity P: the phase of parity P completed, i.e. the current phase has the other parity.
    // A state token: the phase it was taken in has completed.
    const bool done = parity ? (b.phase & 1) != (operand & 1) : b.phase > operand;
    if (!done) park = Wait{Wait::Kind::mbarrier, a, b.phase, 0};
    const bool reported = done && !(blocking && w.cta->rng() % 16 == 0);  // try_wait's time limit
    if (reported && !d.relaxed) acquire(w, b.completed);  // .relaxed: no acquire
    reported_false |= !reported;
    w.set(op(d, 0), lane, reported, d);
  });
  if (blocking && reported_false) {
    w.wait = park;  // none after a spurious failure: the warp simply tries again
    return Step::yield;
  }
  return Step::next;
}

}  // namespace

Cta& mbarrier_owner(Warp& w, const Decoded& d, uint32_t address) {
  Cta* owner = w.cta->cluster ? w.cta->cluster->owner(*w.cta, address) : w.cta;
  if (!owner) w.fail(d, "mbarrier operand " + hex(address) + " names no CTA of the cluster");
  if (owner != w.cta && owner->exited)
    w.fail(d, "acts on the mbarrier at shared " + hex(shared_offset(address)) + " of cluster CTA rank " +
                  std::to_string(owner->rank) + ", which has exited");
  return *owner;
}

MBarrier& mbarrier_at(Warp& w, const Decoded& d, uint32_t address) {
  Cta& owner = mbarrier_owner(w, d, address);
  address = shared_offset(address);
  const auto it = owner.mbarriers.find(address);
  if (it == owner.mbarriers.end())
    w.fail(d, "no initialized mbarrier at shared " + hex(address) +
                  (&owner == w.cta ? std::string() : " of cluster CTA rank " + std::to_string(owner.rank)));
  const MBarrier& b = it->second;
  // Its initialization must happen before every use (races.h): a use by another warp needs a
  // synchronization (a barrier, the cluster barrier) since.
  const bool released = b.init_released_phase && w.cluster_acquired >= b.init_released_phase;
  if (b.init_agent != w.agent && !released && !ordered_before(w, static_cast<uint16_t>(b.init_agent + 1), b.init_stamp))
    w.fail(d, "uses the mbarrier at shared " + hex(address) + " that " +
                  agent_name(w, static_cast<uint16_t>(b.init_agent + 1), false) + " initialized (PTX line " +
                  std::to_string(b.init_line) + ") with no synchronization since");
  return it->second;
}

void mbarrier_arrive(Warp& w, const Decoded& d, uint32_t address, uint32_t count, const VectorClock* released) {
  Cta& owner = mbarrier_owner(w, d, address);
  MBarrier& b = mbarrier_at(w, d, address);
  b.pending -= count;
  if (b.pending < 0)
    w.fail(d, "over-arrival at the mbarrier at shared " + hex(address) + " (initialized at PTX line " +
                  std::to_string(b.init_line) + " for " + std::to_string(b.expected) + " arrivals per phase)" +
                  (&owner == w.cta ? std::string() : " of cluster CTA rank " + std::to_string(owner.rank)));
  if (released) merge(b.arrivals, *released);
  else if (!d.relaxed) release(w, b.arrivals);  // .relaxed: no release
  if (const std::string problem = complete_phase_if_done(b); !problem.empty()) w.fail(d, problem);
}

void mbarrier_expect_tx(Warp& w, const Decoded& d, uint32_t address, uint32_t bytes) {
  MBarrier& b = mbarrier_at(w, d, address);
  b.tx += bytes;
}

void mbarrier_complete_tx(Cta& cta, uint32_t address, uint32_t bytes, const VectorClock& released,
                          const std::string& what) {
  const auto it = cta.mbarriers.find(address);
  if (it == cta.mbarriers.end())
    throw EmulationError(what + ": completes transaction bytes on shared " + hex(address) + ", which holds no mbarrier");
  MBarrier& b = it->second;
  b.tx -= bytes;
  if (b.tx < 0 && b.pending == 0)
    throw EmulationError(what + ": completes " + std::to_string(bytes) + " bytes on the mbarrier at shared " + hex(address) +
                         ", more than its phase expects (expect_tx too small)");
  merge(b.arrivals, released);
  if (b.copies_in_flight) --b.copies_in_flight;
  if (const std::string problem = complete_phase_if_done(b); !problem.empty()) throw EmulationError(what + ": " + problem);
}

void decode_mbarrier(const ptx::Instruction&, const Modifiers& m, Decoded& d) {
  d.space = m.space;
  d.relaxed = m.has("relaxed");  // arrive defaults to .release, try_wait/test_wait to .acquire
  auto has = [&](const char* w) { return m.has(w); };
  if (has("init")) d.run = run_init;
  else if (has("inval")) d.run = run_inval;
  else if (has("arrive") || has("arrive_drop")) {
    d.mode = has("expect_tx");
    d.mode2 = has("arrive_drop");
    if (has("noComplete")) throw Unsupported{".noComplete"};
    d.run = run_arrive;
  } else if (has("expect_tx")) d.run = run_expect_tx;
  else if (has("complete_tx")) d.run = run_complete_tx;
  else if (has("try_wait") || has("test_wait")) {
    d.mode = has("parity");
    d.mode2 = has("test_wait");
    d.run = run_wait;
  } else throw Unsupported{"mbarrier operation"};
}

}  // namespace kgen::emu
