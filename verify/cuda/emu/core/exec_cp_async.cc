// The per-thread asynchronous copies of sm_80 that Hopper kernels still use (CuTe's
// SM80_CP_ASYNC atoms): cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}
// {, ignore-src}, cp.async.commit_group, cp.async.wait_group N and cp.async.wait_all.
//
// One warp instruction is one asynchronous operation covering its lanes' copies; groups are
// counted per warp (every lane of a warp commits and waits together in the kernels we run). The
// destination is poison until the copy lands. The copy writes in the generic proxy (it is no
// async-proxy operation in the PTX ISA's list: that is cp.async.bulk, wgmma and tcgen05), so a
// landed copy counts as a generic write of the issuing warp: wgmma and TMA stores reading it
// need a fence.proxy.async after the wait, exactly as for st.shared.
#include <cstring>
#include <memory>
#include <sstream>

#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

struct LaneCopy {
  uint32_t dst;      // shared offset
  uint64_t src;      // global address
  uint32_t bytes;    // cp-size
  uint32_t read;     // bytes read from src (src-size); the rest is zero-filled
};

Step run_copy(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  const uint32_t size = static_cast<uint32_t>(op(d, 2).bits);
  std::vector<LaneCopy> copies;
  for_each_lane(mask, [&](int lane) {
    uint64_t dst = w.address(op(d, 0), lane, d);
    if (window_of(dst) == Window::shared) dst -= kSharedWindow;  // a generic operand
    const uint64_t src = w.address(op(d, 1), lane, d);
    uint32_t read = size;
    for (size_t k = 3; k < d.in->operands.size(); ++k) {
      const ptx::Operand& o = op(d, k);
      // ignore-src is a predicate, src-size an integer; the parser keeps no register types, so
      // the name tells them apart (nvcc names predicates %p<N>, inline asm p, p0, ...).
      const std::string& name = o.kind == ptx::Operand::Kind::reg ? cta.launch->program->function->register_names[o.reg] : "";
      const bool predicate = name.rfind("%p", 0) == 0 || name.rfind("p", 0) == 0;
      if (predicate) {
        if (w.get(o, lane, d)) read = 0;  // ignore-src: zeros
      } else if (k == 3) {
        read = static_cast<uint32_t>(w.get(o, lane, d));
      }
    }
    if (read > size) w.fail(d, "cp.async src-size " + std::to_string(read) + " exceeds cp-size " + std::to_string(size), lane);
    if (dst % size || src % size) w.fail(d, "cp.async operands must be aligned to cp-size " + std::to_string(size), lane);
    if (shared_rank(static_cast<uint32_t>(dst)) >= 0 && static_cast<uint32_t>(shared_rank(static_cast<uint32_t>(dst))) != cta.rank)
      w.fail(d, "cp.async destination " + hex(dst) + " is not the CTA's own shared memory", lane);
    dst = shared_offset(static_cast<uint32_t>(dst));
    if (dst < kSharedBase || dst + size > cta.smem.limit)
      w.fail(d, "cp.async writes shared " + hex(dst) + " outside the CTA's shared memory", lane);
    if (read && !cta.launch->globals->find(src, read))
      w.fail(d, "cp.async reads global " + hex(src) + ", outside every allocation", lane);
    for (uint32_t k = 0; k < size; ++k) {
      ShadowByte& s = cta.smem.shadow[dst + k];
      if (s.mbarrier) w.fail(d, "cp.async overwrites the mbarrier at shared " + hex(dst + k), lane);
      if (s.async_reads)
        w.fail(d, "cp.async into shared " + hex(dst + k) + " while an asynchronous operation still reads it", lane);
      ++s.async_writes;
    }
    copies.push_back(LaneCopy{static_cast<uint32_t>(dst), src, size, read});
  });
  auto async = std::make_unique<AsyncOp>();
  async->what = w.where(d);
  async->cp_async = true;
  async->group_warp = static_cast<int>(w.index);
  async->group = w.cp_async_open_group;
  const uint8_t writer = static_cast<uint8_t>(w.index + 1);
  async->complete = [&cta, copies = std::move(copies), writer] {
    for (const LaneCopy& c : copies) {
      uint8_t* p = cta.smem.bytes.data() + c.dst;
      std::memcpy(p, reinterpret_cast<const void*>(c.src), c.read);
      std::memset(p + c.read, 0, c.bytes - c.read);
      for (uint32_t k = 0; k < c.bytes; ++k) {
        ShadowByte& s = cta.smem.shadow[c.dst + k];
        --s.async_writes;
        s.unfenced_writer = writer;  // a generic-proxy write of the issuing warp
      }
    }
  };
  cta.add_async(std::move(async));
  return Step::next;
}

Step run_commit(Warp& w, const Decoded&, uint32_t) {
  ++w.cp_async_open_group;
  return Step::next;
}

// wait_group N: all but the newest N committed groups of this warp are complete (the emulator
// completes them now, a legal time); wait_all: every copy, committed or not.
Step run_wait(Warp& w, const Decoded& d, uint32_t mask) {
  const int me = static_cast<int>(w.index);
  if (d.mode == 1) {
    w.cta->complete_async_if([&](const AsyncOp& o) { return o.cp_async && o.group_warp == me; });
    return Step::next;
  }
  const uint64_t newest_allowed = w.get(op(d, 0), __builtin_ctz(mask), d);
  const uint64_t committed = w.cp_async_open_group;
  const uint64_t keep_from = committed > newest_allowed ? committed - newest_allowed : 0;
  w.cta->complete_async_if([&](const AsyncOp& o) { return o.cp_async && o.group_warp == me && o.group < keep_from; });
  return Step::next;
}

}  // namespace

void decode_cp_async(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (m.has("commit_group")) {
    d.run = run_commit;
    return;
  }
  if (m.has("wait_group") || m.has("wait_all")) {
    d.mode = m.has("wait_all");
    d.run = run_wait;
    return;
  }
  if (m.has("mbarrier")) throw Unsupported{"cp.async.mbarrier.arrive"};
  if (!m.has("ca") && !m.has("cg")) throw Unsupported{"cp.async form"};
  if (in.operands.size() < 3 || in.operands[2].kind != ptx::Operand::Kind::imm) throw Unsupported{"cp-size operand"};
  const uint64_t size = in.operands[2].bits;
  if (size != 4 && size != 8 && size != 16) throw Unsupported{"cp-size " + std::to_string(size)};
  for (const std::string& w : m.words)
    if (w != "async" && w != "global" && w != "ca" && w != "cg" && w != "L2::64B" && w != "L2::128B" && w != "L2::256B" && w != "L2::cache_hint")
      throw Unsupported{"modifier ." + w};
  if (m.has("L2::cache_hint")) throw Unsupported{".L2::cache_hint (its operand)"};
  d.space = ptx::Space::shared;
  d.run = run_copy;
}

}  // namespace kgen::emu
