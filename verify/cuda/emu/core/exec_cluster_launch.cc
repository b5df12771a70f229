// Cluster launch control (sm_100a): clusterlaunchcontrol.try_cancel asks, asynchronously, to
// cancel the launch of a cluster that has not started yet; its 16-byte response lands in shared
// memory (every CTA's of the cluster with .multicast::cluster::all) and completes 16 transaction
// bytes on the mbarrier there. clusterlaunchcontrol.query_cancel reads a response loaded into a
// .b128 register (PTX ISA 9.7.13.17 and 9.7.13.18). CUTLASS's sm100 persistent tile scheduler
// walks its work this way.
//
// The launch runs clusters one after another (device.cc); a try_cancel that completes takes the
// next cluster not yet started off that queue, so its work is done by the requesting cluster
// instead, as on the GPU. The response is opaque to the program; here it is the canceled
// cluster's first ctaid x, y, z and a nonzero fourth word, or four zero words for a failure.
// Checked: alignment and bounds of the response, its bytes poisoned until the copy lands (a
// read before the mbarrier wait is a finding), every CTA of a multicast being alive, and a
// try_cancel after this CTA saw one fail (undefined behavior in the ISA).
#include <array>
#include <cstring>
#include <memory>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/mbarrier.h"
#include "core/races.h"

namespace kgen::emu {
namespace {

uint32_t shared_operand(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  uint64_t a = w.address(o, lane, d);
  if (d.space == ptx::Space::none) {
    if (window_of(a) != Window::shared) w.fail(d, "clusterlaunchcontrol operand " + hex(a) + " is not shared memory", lane);
    a -= kSharedWindow;
  }
  if (static_cast<uint32_t>(shared_rank(static_cast<uint32_t>(a))) != w.cta->rank)
    w.fail(d, "clusterlaunchcontrol operand " + hex(a) + " is not the executing CTA's shared memory (.shared::cta)", lane);
  return static_cast<uint32_t>(a);
}

// clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
//   {.multicast::cluster::all}.b128 [addr], [mbar]
Step run_try_cancel(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  const bool all = d.mode == 1;
  for_each_lane(mask, [&](int lane) {
    const uint32_t addr = shared_offset(shared_operand(w, d, op(d, 0), lane));
    const uint32_t mbar = shared_offset(shared_operand(w, d, op(d, 1), lane));
    if (cta.clc_failed)
      w.fail(d, "clusterlaunchcontrol.try_cancel after this CTA's earlier request failed (undefined behavior)", lane);
    if (addr % 16) w.fail(d, "clusterlaunchcontrol.try_cancel response at shared " + hex(addr) + " is not 16-byte aligned", lane);
    std::vector<Cta*> targets{&cta};
    if (all) targets = cta.cluster->ctas;
    for (Cta* t : targets) {
      if (t->exited)
        w.fail(d, "clusterlaunchcontrol.try_cancel.multicast::cluster::all while cluster CTA rank " + std::to_string(t->rank) +
                      " has exited",
               lane);
      if (addr < kSharedBase || addr + 16 > t->smem.limit)
        w.fail(d, "clusterlaunchcontrol.try_cancel response at shared " + hex(addr) + " lies outside the CTA's shared memory",
               lane);
      mbarrier_at(w, d, cluster_shared_address(t->rank, mbar));
      ++t->mbarriers.at(mbar).copies_in_flight;
      for (uint32_t k = 0; k < 16; ++k) {
        ShadowByte& s = t->smem.shadow[addr + k];
        if (s.mbarrier) w.fail(d, "clusterlaunchcontrol.try_cancel overwrites the mbarrier at shared " + hex(addr + k), lane);
        const std::string race = async_access(w, s, true);
        if (!race.empty()) w.fail(d, "clusterlaunchcontrol.try_cancel writes shared " + hex(addr + k) + " " + race, lane);
        ++s.async_writes;
      }
    }
    VectorClock issued;
    release(w, issued);
    auto async = std::make_unique<AsyncOp>();
    async->what = w.where(d, lane);
    Launch* launch = cta.launch;
    Cta* requester = &cta;
    async->complete = [launch, requester, targets, addr, mbar, issued, what = async->what] {
      std::array<uint32_t, 4> response{};
      if (!launch->unlaunched.empty()) {
        const Dim3 c = launch->unlaunched.front();
        launch->unlaunched.pop_front();
        response = {c.x * launch->cluster.x, c.y * launch->cluster.y, c.z * launch->cluster.z, 1};
      } else {
        requester->clc_failed = true;
      }
      for (Cta* t : targets) {
        if (t->exited) throw EmulationError(what + ": its response lands in cluster CTA rank " + std::to_string(t->rank) + ", which has exited");
        for (uint32_t k = 0; k < 16; ++k) --t->smem.shadow[addr + k].async_writes;
        std::memcpy(t->smem.bytes.data() + addr, response.data(), 16);
        mbarrier_complete_tx(*t, mbar, 16, issued, what);
      }
    };
    cta.add_async(std::move(async));
  });
  return Step::next;
}

// The two 64-bit halves of a .b128 register (two slots, low first).
std::array<uint64_t, 2> read_b128(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  if (o.kind != ptx::Operand::Kind::reg) w.fail(d, "clusterlaunchcontrol.query_cancel needs a .b128 register", lane);
  ptx::Operand high = o;
  high.reg = o.reg + 1;
  return {w.get(o, lane, d), w.get(high, lane, d)};
}

// query_cancel.is_canceled.pred.b128 p, h | .get_first_ctaid.v4.b32.b128 {x, y, z, _}, h |
// .get_first_ctaid::{x,y,z}.b32.b128 r, h
Step run_query_cancel(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const std::array<uint64_t, 2> h = read_b128(w, d, op(d, 1), lane);
    const uint32_t words[4] = {static_cast<uint32_t>(h[0]), static_cast<uint32_t>(h[0] >> 32), static_cast<uint32_t>(h[1]),
                               static_cast<uint32_t>(h[1] >> 32)};
    const bool canceled = words[3] != 0;
    if (d.mode == 0) {
      w.set(op(d, 0), lane, canceled ? 1 : 0, d);
      return;
    }
    // The ctaid of a failed response is undefined: reading it is a finding.
    if (!canceled) w.fail(d, "clusterlaunchcontrol.query_cancel.get_first_ctaid of a response that did not cancel a cluster", lane);
    if (d.mode == 4) {
      const ptx::Operand& v = op(d, 0);
      for (size_t k = 0; k < 4 && k < v.elements.size(); ++k) w.set(v.elements[k], lane, k < 3 ? words[k] : 0, d);
    } else {
      w.set(op(d, 0), lane, words[d.mode - 1], d);  // ::x, ::y, ::z
    }
  });
  return Step::next;
}

}  // namespace

void decode_cluster_launch(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  d.space = m.space;
  if (m.has("try_cancel")) {
    if (!m.has("async") || !m.has("mbarrier::complete_tx::bytes")) throw Unsupported{"try_cancel form"};
    if (in.operands.size() != 2) throw Unsupported{"operand form"};
    d.mode = m.has("multicast::cluster::all");
    d.run = run_try_cancel;
  } else if (m.has("query_cancel")) {
    if (in.operands.size() != 2) throw Unsupported{"operand form"};
    if (m.has("is_canceled")) d.mode = 0;
    else if (m.has("get_first_ctaid::x")) d.mode = 1;
    else if (m.has("get_first_ctaid::y")) d.mode = 2;
    else if (m.has("get_first_ctaid::z")) d.mode = 3;
    else if (m.has("get_first_ctaid") && m.vector == 4 && in.operands[0].kind == ptx::Operand::Kind::vector) d.mode = 4;
    else throw Unsupported{"query_cancel form"};
    d.run = run_query_cancel;
  } else {
    throw Unsupported{"clusterlaunchcontrol operation"};
  }
}

}  // namespace kgen::emu
