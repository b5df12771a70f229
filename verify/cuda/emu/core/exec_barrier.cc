// bar.sync / barrier.sync / bar.arrive / barrier.arrive (CTA named barriers 0..15, with or
// without a thread count) and bar.warp.sync. A warp arrives for all its threads, as the PTX
// ISA says barriers execute "on a per-warp basis"; a count that is not a multiple of the warp
// size, arrivals past the count, or counts that disagree within a phase are reported.
#include <algorithm>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/races.h"

namespace kgen::emu {

void check_members(Warp& w, const Decoded& d, uint32_t mask, uint32_t members);  // exec_warp.cc

namespace {

uint32_t cta_threads_alive(const Cta& cta) {
  uint32_t n = 0;
  for (const Warp& w : cta.warps)
    if (w.live()) n += static_cast<uint32_t>(__builtin_popcount(w.valid));
  return n;
}

// Arrives; returns the generation the warp waits for, or nothing when its arrival completed
// the barrier.
Step arrive(Warp& w, const Decoded& d, uint32_t mask, bool wait) {
  Cta& cta = *w.cta;
  const int lane = __builtin_ctz(mask);
  const uint64_t id = w.get(op(d, 0), lane, d);
  if (id >= cta.barriers.size()) w.fail(d, "barrier id " + std::to_string(id) + " is not in 0..15");
  uint32_t count = cta_threads_alive(cta);
  if (d.in->operands.size() > 1) {
    count = static_cast<uint32_t>(w.get(op(d, 1), lane, d));
    if (count == 0 || count % 32) w.fail(d, "barrier thread count " + std::to_string(count) + " is not a positive multiple of 32");
  }
  NamedBarrier& b = cta.barriers[id];
  if (b.arrived == 0) b.expected = count;
  else if (b.expected != count)
    w.fail(d, "barrier " + std::to_string(id) + " expects " + std::to_string(count) + " threads here but " +
                  std::to_string(b.expected) + " in the same phase elsewhere");
  if (std::find(b.warps.begin(), b.warps.end(), w.index) != b.warps.end())
    w.fail(d, "warp arrives twice at barrier " + std::to_string(id) + " in one phase");
  b.arrived += static_cast<uint32_t>(__builtin_popcount(w.valid));
  b.warps.push_back(w.index);
  if (wait) b.waiters.push_back(w.index);
  release(w, b.arrivals);
  if (b.arrived > b.expected)
    w.fail(d, "more threads (" + std::to_string(b.arrived) + ") arrive at barrier " + std::to_string(id) + " than its count " +
                  std::to_string(b.expected));
  if (b.arrived == b.expected) {
    for (uint32_t warp : b.waiters) acquire(cta.warps[warp], b.arrivals);
    b.arrived = 0;
    b.warps.clear();
    b.waiters.clear();
    b.arrivals.assign(b.arrivals.size(), 0);
    ++b.generation;
    return Step::next;
  }
  if (wait) w.wait = Wait{Wait::Kind::barrier, static_cast<uint32_t>(id), b.generation, 0};
  return Step::next;
}

Step run_bar_sync(Warp& w, const Decoded& d, uint32_t mask) {
  if (d.mode2 && mask != w.live()) w.fail(d, "barrier.sync.aligned executed by a diverged warp");
  return arrive(w, d, mask, true);
}

Step run_bar_arrive(Warp& w, const Decoded& d, uint32_t mask) { return arrive(w, d, mask, false); }

Step run_warp_sync(Warp& w, const Decoded& d, uint32_t mask) {
  check_members(w, d, mask, static_cast<uint32_t>(w.get(op(d, 0), __builtin_ctz(mask), d)));
  return Step::next;
}

}  // namespace

void decode_barrier(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (m.has("warp")) {
    d.run = run_warp_sync;
    return;
  }
  if (m.has("cluster")) {  // barrier.cluster.{arrive,wait}: exec_cluster.cc
    decode_cluster(in, m, d);
    return;
  }
  d.mode2 = in.parts[0] == "bar" || m.has("aligned");  // bar is barrier.aligned
  if (m.has("red")) throw Unsupported{"bar.red"};
  if (m.has("sync") || in.parts.size() == 1 || m.has("cta")) d.run = run_bar_sync;
  if (m.has("arrive")) d.run = run_bar_arrive;
  if (!d.run) throw Unsupported{"barrier form"};
}

}  // namespace kgen::emu
