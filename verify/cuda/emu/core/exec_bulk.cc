// The Hopper bulk copy engine: cp.async.bulk.tensor (TMA tile loads into shared memory that
// complete_tx an mbarrier, and tile stores out of shared memory in bulk async-groups),
// cp.async.bulk (non-tensor) and cp.async.bulk.commit_group / wait_group{.read}.
//
// Issue validates and marks the shared bytes involved (a load's destination is poison until
// it lands; a store's source must not be written until its group is waited for, and must have
// been published to the async proxy by fence.proxy.async); the copy itself happens when the
// scheduler completes the operation.
#include <cstring>
#include <memory>
#include <sstream>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/mbarrier.h"
#include "core/races.h"
#include "tensor/tma.h"

namespace kgen::emu {
namespace {

uint32_t shared_address(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  uint64_t a = w.address(o, lane, d);
  if (window_of(a) == Window::shared) a -= kSharedWindow;  // a generic operand
  return static_cast<uint32_t>(a);
}

TensorMap read_tensor_map(Warp& w, const Decoded& d, const ptx::Operand& o, int lane) {
  const uint64_t a = w.address(o, lane, d);
  if (a % 64) w.fail(d, "tensor map at " + hex(a) + " is not 64-byte aligned", lane);
  const uint8_t* p = w.access(ptx::Space::none, a, 128, false, lane, d);
  TensorMap map;
  std::memcpy(&map, p, sizeof map);
  if (map.magic != TensorMap::kMagic)
    w.fail(d, "the tensor map at " + hex(a) + " was not made by cuTensorMapEncodeTiled", lane);
  return map;
}

// The CTA whose shared memory a bulk copy's shared::cluster operand names (memory.h).
Cta& shared_target(Warp& w, const Decoded& d, uint32_t a, int lane) {
  Cta* target = w.cta->cluster ? w.cta->cluster->owner(*w.cta, a) : w.cta;
  if (!target) w.fail(d, "bulk copy operand " + hex(a) + " names no CTA of the cluster", lane);
  if (target->exited)
    w.fail(d, "bulk copy into the shared memory of cluster CTA rank " + std::to_string(target->rank) + ", which has exited",
           lane);
  return *target;
}

// A shared::cta operand (stores read the executing CTA's own shared memory).
uint32_t own_shared_address(Warp& w, const Decoded& d, uint32_t a, int lane) {
  if (&shared_target(w, d, a, lane) != w.cta) w.fail(d, "bulk copy source " + hex(a) + " is not the CTA's own shared memory", lane);
  return shared_offset(a);
}

void check_range(Warp& w, const Decoded& d, const Cta& target, uint32_t a, uint32_t bytes, int lane) {
  if (a < kSharedBase || uint64_t{a} + bytes > target.smem.limit)
    w.fail(d, "bulk copy touches shared " + hex(a) + "+" + std::to_string(bytes) + ", outside the CTA's shared memory", lane);
}

// Marks a load's destination poisoned until it lands.
void begin_async_write(Warp& w, const Decoded& d, Cta& target, uint32_t a, uint32_t bytes, int lane) {
  check_range(w, d, target, a, bytes, lane);
  for (uint32_t k = 0; k < bytes; ++k) {
    ShadowByte& s = target.smem.shadow[a + k];
    if (s.mbarrier) w.fail(d, "bulk copy overwrites the mbarrier at shared " + hex(a + k), lane);
    if (s.async_reads)
      w.fail(d, "bulk copy into shared " + hex(a + k) + " while an asynchronous operation still reads it", lane);
    // Two copies in flight into one byte land in either order: a stage refilled before its
    // last copy was waited for.
    if (s.async_writes)
      w.fail(d, "bulk copy into shared " + hex(a + k) + " while an earlier copy still writes it: a missing wait", lane);
    const std::string race = async_access(w, s, true);
    if (!race.empty()) w.fail(d, "bulk copy into shared " + hex(a + k) + " " + race, lane);
    ++s.async_writes;
  }
}

// The copy landed: its bytes are written on behalf of the mbarrier at `mbar` of `signalled` (races.h), which
// its readers must have waited for (or synchronized with a warp that did).
void end_async_write(Cta& cta, uint32_t a, uint32_t bytes, Cta& signalled, uint32_t mbar) {
  if (cta.exited) throw EmulationError("a bulk copy lands in the shared memory of a CTA that has exited");
  const auto barrier = signalled.mbarriers.find(mbar);  // the peer's, for a .cta_group::2 copy
  for (uint32_t k = 0; k < bytes; ++k) {
    ShadowByte& s = cta.smem.shadow[a + k];
    --s.async_writes;
    if (barrier != cta.mbarriers.end()) record_copy_write(barrier->second, s);
  }
}

// Marks a store's source read by the async proxy; its bytes must have been fenced.
void begin_async_read(Warp& w, const Decoded& d, uint32_t a, uint32_t bytes, int lane) {
  check_range(w, d, *w.cta, a, bytes, lane);
  for (uint32_t k = 0; k < bytes; ++k) {
    ShadowByte& s = w.cta->smem.shadow[a + k];
    if (s.async_writes) w.fail(d, "bulk store reads shared " + hex(a + k) + " before the copy writing it landed", lane);
    if (s.unfenced_writer)
      w.fail(d, "bulk store reads shared " + hex(a + k) + ", written by " + unfenced_writer_name(s.unfenced_writer) +
                    " with no fence.proxy.async since: the async proxy may not see the write", lane);
    const std::string race = async_access(w, s, false);
    if (!race.empty()) w.fail(d, "bulk store of shared " + hex(a + k) + " " + race, lane);
    ++s.async_reads;
  }
}

void end_async_read(Cta& cta, uint32_t a, uint32_t bytes) {
  for (uint32_t k = 0; k < bytes; ++k) --cta.smem.shadow[a + k].async_reads;
}

GlobalRead global_reader(Cta& cta, const std::string& what) {
  return [&cta, what](uint64_t address, std::span<uint8_t> out) {
    if (!cta.launch->globals->find(address, out.size()))
      throw EmulationError(what + ": reads global " + hex(address) + ", outside every allocation");
    std::memcpy(out.data(), reinterpret_cast<const void*>(address), out.size());
  };
}

GlobalWrite global_writer(Cta& cta, const std::string& what) {
  return [&cta, what](uint64_t address, std::span<const uint8_t> bytes) {
    if (!cta.launch->globals->find(address, bytes.size()))
      throw EmulationError(what + ": writes global " + hex(address) + ", outside every allocation");
    std::memcpy(reinterpret_cast<void*>(address), bytes.data(), bytes.size());
  };
}

std::vector<int32_t> coordinates(Warp& w, const Decoded& d, const ptx::Operand& vector, int lane) {
  std::vector<int32_t> c;
  for (const ptx::Operand& e : vector.elements) c.push_back(static_cast<int32_t>(w.get(e, lane, d)));
  return c;
}

// A copy accesses its mbarrier in the generic proxy ("This instruction accesses its mbarrier
// operand using generic-proxy", PTX ISA 9.2, cp.async.bulk.tensor): the init must happen before
// the issue, as for any other use (mbarrier_at), and needs no proxy fence.
void check_mbarrier_published(Warp& w, const Decoded& d, uint32_t mbar, int) { mbarrier_at(w, d, mbar); }

// cp.async.bulk.tensor.Nd{.cta_group::2}.shared::cluster.global.mbarrier::complete_tx::bytes
//   {.multicast::cluster} [dst], [map, {c}], [mbar]{, ctaMask}
// Without multicast, dst and mbar name one CTA's shared memory (a peer's through a
// shared::cluster address). With it, the box lands at dst's offset in every CTA of ctaMask and
// completes bytes on the mbarrier at mbar's offset in each of them. With .cta_group::2 the
// mbarrier may lie in the destination's peer CTA instead, and a multicast signals, for each
// destination, the CTA of its pair whose rank has the parity of mbar's CTA (PTX ISA,
// cp.async.bulk.tensor).
Step run_tensor_load(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  const bool multicast = d.mode == 1, pair = d.mode2 == 1;
  for_each_lane(mask, [&](int lane) {
    const uint32_t dst_operand = shared_address(w, d, op(d, 0), lane);
    const ptx::Operand& source = op(d, 1);
    const TensorMap map = read_tensor_map(w, d, source.elements[0], lane);
    const std::vector<int32_t> c = coordinates(w, d, source.elements[1], lane);
    const uint32_t mbar_operand = shared_address(w, d, op(d, 2), lane);
    std::vector<Cta*> targets, signalled;  // where the box lands, whose mbarrier each completes
    Cta& mbar_cta = mbarrier_owner(w, d, mbar_operand);
    auto signalled_for = [&](Cta& target) -> Cta& {
      if (!pair) return target;
      const uint32_t rank = (target.rank & ~1u) | (mbar_cta.rank & 1u);
      if (!cta.cluster || rank >= cta.cluster->ctas.size())
        w.fail(d, "TMA load .cta_group::2 into CTA rank " + std::to_string(target.rank) + ", which has no peer CTA", lane);
      return mbarrier_owner(w, d, cluster_shared_address(rank, mbar_operand));
    };
    if (multicast) {
      const uint64_t cta_mask = w.get(op(d, 3), lane, d) & 0xffff;
      const size_t size = cta.cluster ? cta.cluster->ctas.size() : 1;
      if (cta_mask == 0) w.fail(d, "TMA multicast with an empty ctaMask", lane);
      if (cta_mask >> size)
        w.fail(d, "TMA multicast ctaMask " + hex(cta_mask) + " names CTAs outside the cluster of " + std::to_string(size),
               lane);
      for (uint32_t r = 0; r < size; ++r)
        if (cta_mask >> r & 1) {
          targets.push_back(&shared_target(w, d, cluster_shared_address(r, 0), lane));
          signalled.push_back(&signalled_for(*targets.back()));
        }
    } else {
      Cta& target = shared_target(w, d, dst_operand, lane);
      if (&mbar_cta != &target && !(pair && (mbar_cta.rank ^ target.rank) == 1))
        w.fail(d, pair ? "TMA load .cta_group::2 whose mbarrier lies in neither its destination CTA nor that CTA's peer"
                       : "TMA load whose destination and mbarrier lie in different CTAs",
               lane);
      targets.push_back(&target);
      signalled.push_back(&mbar_cta);
    }
    const uint32_t dst = shared_offset(dst_operand), mbar = shared_offset(mbar_operand);
    const uint32_t bytes = box_bytes(map);
    for (size_t k = 0; k < targets.size(); ++k) {
      Cta* target = targets[k];
      const std::string problem = check_tma_tile(map, c.size(), dst, target->smem.limit);
      if (!problem.empty()) w.fail(d, "TMA load: " + problem, lane);
      check_mbarrier_published(w, d, cluster_shared_address(signalled[k]->rank, mbar), lane);
      ++signalled[k]->mbarriers.at(mbar).copies_in_flight;
      begin_async_write(w, d, *target, dst, bytes, lane);
    }
    // The copy's completion releases, on the mbarrier, what its issuer had done (races.h).
    VectorClock issued;
    release(w, issued);
    auto async = std::make_unique<AsyncOp>();
    async->what = w.where(d, lane);
    if (targets.size() == 1) {
      async->signals_cta = signalled.front();
      async->signals_mbarrier = mbar;
    }
    async->complete = [targets, signalled, map, c, dst, mbar, bytes, issued, what = async->what] {
      for (size_t k = 0; k < targets.size(); ++k) {
        Cta* target = targets[k];
        for (const Cta* x : {target, signalled[k]})
          if (x->exited)
            throw EmulationError(what + ": TMA load lands in or signals cluster CTA rank " + std::to_string(x->rank) +
                                 ", which has exited");
        end_async_write(*target, dst, bytes, *signalled[k], mbar);
        const std::string error = tma_load_tile(map, c, target->smem.bytes, dst, global_reader(*target, what));
        if (!error.empty()) throw EmulationError(what + ": TMA load: " + error);
        mbarrier_complete_tx(*signalled[k], mbar, bytes, issued, what);
      }
    };
    cta.add_async(std::move(async));
  });
  return Step::next;
}

// cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [map, {c}], [src]
Step run_tensor_store(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  for_each_lane(mask, [&](int lane) {
    const ptx::Operand& target = op(d, 0);
    const TensorMap map = read_tensor_map(w, d, target.elements[0], lane);
    const std::vector<int32_t> c = coordinates(w, d, target.elements[1], lane);
    const uint32_t src = own_shared_address(w, d, shared_address(w, d, op(d, 1), lane), lane);
    const std::string problem = check_tma_tile(map, c.size(), src, cta.smem.limit);
    if (!problem.empty()) w.fail(d, "TMA store: " + problem, lane);
    const uint32_t bytes = box_bytes(map);
    begin_async_read(w, d, src, bytes, lane);
    auto async = std::make_unique<AsyncOp>();
    async->what = w.where(d, lane);
    async->group_warp = static_cast<int>(w.index);
    async->group = w.bulk_open_group;
    async->complete = [&cta, map, c, src, bytes, what = async->what] {
      end_async_read(cta, src, bytes);
      const std::string error = tma_store_tile(map, c, cta.smem.bytes, src, global_writer(cta, what));
      if (!error.empty()) throw EmulationError(what + ": TMA store: " + error);
    };
    cta.add_async(std::move(async));
  });
  return Step::next;
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
Step run_bulk_load(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  for_each_lane(mask, [&](int lane) {
    const uint32_t dst_operand = shared_address(w, d, op(d, 0), lane);
    const uint64_t src = w.address(op(d, 1), lane, d);
    const uint32_t bytes = static_cast<uint32_t>(w.get(op(d, 2), lane, d));
    const uint32_t mbar_operand = shared_address(w, d, op(d, 3), lane);
    const uint32_t dst = shared_offset(dst_operand), mbar = shared_offset(mbar_operand);
    if (dst % 16 || src % 16 || bytes % 16) w.fail(d, "bulk copy operands must be 16-byte aligned and sized", lane);
    Cta& target = shared_target(w, d, dst_operand, lane);
    if (&mbarrier_owner(w, d, mbar_operand) != &target)
      w.fail(d, "bulk copy whose destination and mbarrier lie in different CTAs", lane);
    check_mbarrier_published(w, d, mbar_operand, lane);
    ++target.mbarriers.at(mbar).copies_in_flight;
    begin_async_write(w, d, target, dst, bytes, lane);
    VectorClock issued;
    release(w, issued);
    auto async = std::make_unique<AsyncOp>();
    async->what = w.where(d, lane);
    async->signals_cta = &target;
    async->signals_mbarrier = mbar;
    async->complete = [&target, dst, src, bytes, mbar, issued, what = async->what] {
      end_async_write(target, dst, bytes, target, mbar);
      global_reader(target, what)(src, std::span<uint8_t>(target.smem.bytes.data() + dst, bytes));
      mbarrier_complete_tx(target, mbar, bytes, issued, what);
    };
    cta.add_async(std::move(async));
  });
  return Step::next;
}

// cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
Step run_bulk_store(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  for_each_lane(mask, [&](int lane) {
    const uint64_t dst = w.address(op(d, 0), lane, d);
    const uint32_t src = own_shared_address(w, d, shared_address(w, d, op(d, 1), lane), lane);
    const uint32_t bytes = static_cast<uint32_t>(w.get(op(d, 2), lane, d));
    if (dst % 16 || src % 16 || bytes % 16) w.fail(d, "bulk copy operands must be 16-byte aligned and sized", lane);
    begin_async_read(w, d, src, bytes, lane);
    auto async = std::make_unique<AsyncOp>();
    async->what = w.where(d, lane);
    async->group_warp = static_cast<int>(w.index);
    async->group = w.bulk_open_group;
    async->complete = [&cta, dst, src, bytes, what = async->what] {
      end_async_read(cta, src, bytes);
      global_writer(cta, what)(dst, std::span<const uint8_t>(cta.smem.bytes.data() + src, bytes));
    };
    cta.add_async(std::move(async));
  });
  return Step::next;
}

Step run_commit(Warp& w, const Decoded&, uint32_t) {
  ++w.bulk_open_group;
  return Step::next;
}

// wait_group{.read} N: every committed group of this warp but the newest N is complete. The
// emulator completes them now, which is a legal time for them to finish.
Step run_wait_group(Warp& w, const Decoded& d, uint32_t mask) {
  const uint64_t newest_allowed = w.get(op(d, 0), __builtin_ctz(mask), d);
  const uint64_t committed = w.bulk_open_group;  // groups 0 .. committed-1 are committed
  const uint64_t keep_from = committed > newest_allowed ? committed - newest_allowed : 0;
  const int me = static_cast<int>(w.index);
  w.cta->complete_async_if([&](const AsyncOp& o) { return !o.cp_async && o.group_warp == me && o.group < keep_from; });
  return Step::next;
}

}  // namespace

void decode_bulk(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (in.parts.size() >= 2 && in.parts[1] == "async" && (in.parts.size() < 3 || in.parts[2] != "bulk")) {
    decode_cp_async(in, m, d);  // the per-thread (non-bulk) copies: exec_cp_async.cc
    return;
  }
  if (in.parts.size() < 3 || in.parts[1] != "async" || in.parts[2] != "bulk")
    throw Unsupported{"only the asynchronous copies (cp.async...) are implemented"};
  if (m.has("commit_group")) {
    d.run = run_commit;
    return;
  }
  if (m.has("wait_group")) {
    d.run = run_wait_group;
    return;
  }
  d.mode = m.has("multicast::cluster");
  d.mode2 = m.has("cta_group::2");
  if (d.mode && !m.has("tensor")) throw Unsupported{"multicast of non-tensor bulk copies"};
  if (d.mode2 && !m.has("tensor")) throw Unsupported{".cta_group::2 with non-tensor bulk copies"};
  if (m.has("im2col") || m.has("im2col::w") || m.has("tile::gather4") || m.has("tile::scatter4"))
    throw Unsupported{"TMA modes other than tile"};
  const bool tensor = m.has("tensor");
  const bool load = m.space == ptx::Space::shared;
  if (tensor) d.run = load ? run_tensor_load : run_tensor_store;
  else d.run = load ? run_bulk_load : run_bulk_store;
  if (load && !m.has("mbarrier::complete_tx::bytes")) throw Unsupported{"loads that complete no mbarrier"};
  if (!load && !m.has("bulk_group")) throw Unsupported{"stores outside a bulk group"};
}

}  // namespace kgen::emu
