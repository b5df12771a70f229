// tcgen05 (sm_100a): tensor-memory allocation, the tensor core's MMA and commit, tensor-memory
// loads and stores, their waits and the thread-sync fences (PTX ISA "TensorCore 5th Generation
// Family Instructions"). The state and its shadow are core/tensor_memory.h.
//
// tcgen05.mma (cta_group::1, kind::f16 and kind::tf32, SS and TS) is issued by each lane that
// executes it; it reads its shared-memory operands' bytes through the descriptors at issue
// (bytes a TMA load still writes, generic writes no fence.proxy.async published, or an mbarrier
// are findings; the bytes stay marked read until it completes, so a generic or TMA write to
// them is a finding too). It then waits in the CTA's tensor-core pipe, which the scheduler
// completes at a time of its choosing, in issue order: D = A B^T (+ D) with f32 accumulation
// in k order. A tcgen05.commit is a pipe entry behind the MMAs: when it runs, the MMAs its
// thread issued before it are complete, and its one arrival on its mbarrier becomes an async
// operation of its own (arrivals of different commits are not ordered with each other).
//
// The tensor core is an agent of the race check (core/races.h): an MMA's shared-memory operand
// bytes are checked at issue against unsynchronized generic writes, and recorded as read by
// the tensor core when it completes; a commit's arrival releases the tensor core's clock, so a
// later write to those bytes (a TMA refilling the stage) must come from a warp that waited for
// such a commit, or synchronized with one that did.
//
// What is checked, beyond the operands' bounds and encodings:
//   * tcgen05.alloc: ncols a power of two in 32..512, the allocation permit; it blocks while
//     the columns are taken (the other CTA an SM may hold is modelled absent), and a request
//     only the requesting warp itself could ever make room for is reported at once;
//     tcgen05.dealloc must free exactly one allocation; a CTA that exits holding tensor memory;
//   * tcgen05.ld/st (.32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2: tensor/umma.h): the
//     warp's lane quarter (32 (warp % 4) .., or either half of it), allocated columns;
//     the cells of an st are pending until tcgen05.wait::st (another warp's access or an MMA
//     reading them before is a finding), the cells an ld reads until tcgen05.wait::ld (a write
//     of them before, by any warp or MMA, is a finding: the anti-dependency the PTX ISA's
//     "Register dependencies, same thread" (9.7.16.6.4.5) says only wait::ld orders). The ld's
//     destination registers may be read at once: that true register dependency is respected
//     without a wait (same section); writing one before wait::ld is a finding (Warp::get/set);
//   * cells an MMA writes (D) or reads (TS A) are poisoned until it completes, and its D
//     writes are invisible until the mbarrier phase of a commit issued after it by the same
//     thread has completed: an ld, st or MMA touching them earlier is a finding;
//   * hand-offs of tensor memory between warps (a write then any access, or a read then a
//     write, by different warps) that no release/acquire synchronization orders (core/races.h;
//     .relaxed mbarrier operations and barrier.cluster.arrive.relaxed order nothing): the first
//     warp's tcgen05.fence::before_thread_sync after its access (an MMA's commit stands for it),
//     and the second warp's tcgen05.fence::after_thread_sync after that access (after the
//     commit's arrival for an MMA's write), before its own access. Also at tcgen05.dealloc.
// Not checked: that a synchronization (mbarrier, bar.sync) actually lies between the fences
// of a hand-off (a missing one is a race the shadow state sees only when the scheduler lets
// it happen); the order of one warp's own tcgen05.st and later tcgen05.ld of the same cells;
// whether a commit's mbarrier was published to the async proxy by fence.mbarrier_init; which
// thread's MMAs a commit covers, for the race check (the tensor core's clock covers every MMA
// of the CTA before the commit in the pipe, so a commit of another thread can order too much).
// Not required: the fence pair around the hand-off of tcgen05.alloc's address through shared
// memory. alloc is a synchronous tcgen05 instruction whose store is an ordinary weak store (PTX
// ISA, tcgen05.alloc and "Memory Consistency Model for 5th generation of TensorCore
// operations"); the fences order asynchronous tcgen05 operations only.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/mbarrier.h"
#include "core/races.h"
#include "core/tensor_memory.h"
#include "tensor/umma.h"

namespace kgen::emu {
namespace {

using State = Cta::TensorMemoryState;

std::string cell_name(uint32_t lane, uint32_t column) {
  return "tensor memory (lane " + std::to_string(lane) + ", column " + std::to_string(column) + ")";
}

void require_whole_warp(Warp& w, const Decoded& d, uint32_t mask) {
  if (mask != w.live() || w.valid != 0xffffffffu)
    w.fail(d, "executed by a diverged or partial warp: .sync.aligned needs every lane of the warp");
}

// The value every lane gives an operand, which must be warp-uniform.
uint64_t uniform(Warp& w, const Decoded& d, uint32_t mask, const std::function<uint64_t(int)>& value, const char* what) {
  const int first = __builtin_ctz(mask);
  const uint64_t v = value(first);
  for_each_lane(mask & (mask - 1), [&](int lane) {
    if (value(lane) != v) w.fail(d, std::string(what) + " differs between the lanes of the warp", lane);
  });
  return v;
}

void poison_ld(Warp& w, uint32_t slot) {
  if (!w.poisoned[slot]) ++w.poisoned_count;
  w.poisoned[slot] |= Warp::kTcgen05LdPoison;
}

std::string mma_at(const State& t, uint64_t seq_plus_one) {
  if (!seq_plus_one) return "a tcgen05.mma";
  return "the tcgen05.mma at PTX line " + std::to_string(t.mmas[seq_plus_one - 1].line);
}

// ---- CTA pairs (.cta_group::2) ----

// Who `w` is in the tensor memory `t`: its warp index in its own CTA's, kPeerIssuer + that index
// in the peer CTA's (which a cta_group::2 MMA it issues writes too).
int actor(const Warp& w, const State& t) {
  return t.owner == w.cta ? static_cast<int>(w.index) : kPeerIssuer + static_cast<int>(w.index);
}

// Its tcgen05.fence timeline on the clock of `t`.
State::WarpState& actor_state(Warp& w, State& t) { return t.owner == w.cta ? t.warp(w) : t.peer_warps[w.index]; }

std::string warp_name(int warp) {
  return warp >= kPeerIssuer ? "the peer CTA's warp " + std::to_string(warp - kPeerIssuer) : "warp " + std::to_string(warp);
}

// The CTA pair of the executing CTA, even CTA first: the two CTAs of its cluster whose
// %cluster_ctarank differs in the last bit only (PTX ISA 9.7.16.5.1 "CTA Pair").
std::array<Cta*, 2> pair_of(Warp& w, const Decoded& d, int lane) {
  const Cluster* cluster = w.cta->cluster;
  const uint32_t even = w.cta->rank & ~1u;
  if (!cluster || even + 1 >= cluster->ctas.size())
    w.fail(d, ".cta_group::2 in CTA rank " + std::to_string(w.cta->rank) + " of a cluster of " +
                  std::to_string(cluster ? cluster->ctas.size() : 1) + ": it has no peer CTA",
           lane);
  return {cluster->ctas[even], cluster->ctas[even + 1]};
}

Cta* pair_peer(const Cta& cta) {
  const Cluster* cluster = cta.cluster;
  const uint32_t peer = cta.rank ^ 1u;
  return cluster && peer < cluster->ctas.size() ? cluster->ctas[peer] : nullptr;
}

// "All tcgen05 instructions within a kernel must specify the same value for the .cta_group
// qualifier" (PTX ISA, tcgen05.alloc and tcgen05.mma): checked per CTA.
void note_group(Warp& w, const Decoded& d) {
  State& t = tensor_memory(*w.cta);
  const int group = static_cast<int>(d.imm);
  if (t.cta_group && t.cta_group != group)
    w.fail(d, "mixes .cta_group::" + std::to_string(t.cta_group) + " and .cta_group::" + std::to_string(group) +
                  ": all tcgen05 instructions of a kernel must name the same .cta_group");
  t.cta_group = group;
}

// A tcgen05.fence of a warp whose CTA works in a pair also enters the peer's tensor-memory
// clock, where the hand-offs of the MMAs it issues into the peer's tensor memory are checked.
void mirror_fence(Warp& w, bool after) {
  if (tensor_memory(*w.cta).cta_group != 2) return;
  Cta* peer = pair_peer(*w.cta);
  if (!peer) return;
  State& pt = tensor_memory(*peer);
  State::WarpState& mine = pt.peer_warps[w.index];
  (after ? mine.after_fence : mine.before_fence) = ++pt.clock;
}

// The MMA and tcgen05.st hazards of one cell for an access by warp `w`. `issuer_only`: the
// access needs an MMA of this warp complete, not signalled (tcgen05.dealloc by the issuer).
void check_cell(Warp& w, const Decoded& d, State& t, const TmemShadowCell& c, bool write, const char* mine,
                uint32_t lane, uint32_t column, bool issuer_only = false) {
  const int me = actor(w, t);
  const std::string where = std::string(mine) + " of " + cell_name(lane, column);
  if (write && c.ld_pending >= 0)
    w.fail(d, where + ", which warp " + std::to_string(c.ld_pending) + " read with tcgen05.ld at PTX line " +
                  std::to_string(c.read.line) +
                  " and has not waited for with tcgen05.wait::ld: the load may still be reading it");
  // The MMAs one thread issues run in order: a later one may use what an earlier one writes
  // or reads (accumulation into the same D, S then P V). Threads are told apart by warp here.
  const bool pipelined = std::string_view(mine).starts_with("tcgen05.mma");
  auto mine_in_order = [&](uint64_t seq_plus_one) {
    return pipelined && seq_plus_one && t.mmas[seq_plus_one - 1].warp == me;
  };
  if (mine_in_order(c.write.mma) && (!write || !c.read.mma || mine_in_order(c.read.mma))) {
    if (c.st_pending >= 0 && c.st_pending != me)
      w.fail(d, where + ", which warp " + std::to_string(c.st_pending) + " stored with tcgen05.st at PTX line " +
                    std::to_string(c.write.line) + " and has not waited for with tcgen05.wait::st");
    return;
  }
  if (c.mma_writes)
    w.fail(d, where + " while " + mma_at(t, c.write.mma) +
                  " still writes it: a missing wait for the mbarrier of a tcgen05.commit issued after the MMA");
  if (write && c.mma_reads && !mine_in_order(c.read.mma))
    w.fail(d, where + " while " + mma_at(t, c.read.mma) + " still reads it as its A operand: a missing wait for its commit");
  // The issuer's own dealloc needs its MMAs complete only (it cannot wait for a commit it
  // never issued, and nothing reads the cells afterwards).
  const bool own_mma_done = c.write.mma && t.mmas[c.write.mma - 1].warp == me && t.mmas[c.write.mma - 1].complete &&
                            issuer_only;
  if (c.write.mma && !own_mma_done && !t.published(*t.owner, c.write.mma - 1))
    w.fail(d, where + ", which " + mma_at(t, c.write.mma) +
                  " wrote, before the mbarrier phase of a tcgen05.commit issued after that MMA completed: the access "
                  "races with the tensor core");
  if (write && c.read.mma && t.mmas[c.read.mma - 1].warp != me && !mine_in_order(c.read.mma) &&
      !t.published(*t.owner, c.read.mma - 1))
    w.fail(d, where + ", which " + mma_at(t, c.read.mma) +
                  " reads as A, before the mbarrier phase of a commit issued after that MMA completed");
  if (c.st_pending >= 0 && c.st_pending != me)
    w.fail(d, where + ", which warp " + std::to_string(c.st_pending) + " stored with tcgen05.st at PTX line " +
                  std::to_string(c.write.line) + " and has not waited for with tcgen05.wait::st");
}

// The fence pair of a hand-off from `prior` (another warp's access) to this warp's access.
void check_handoff(Warp& w, const Decoded& d, State& t, const TmemAccess& prior, const char* prior_kind, const char* mine,
                   uint32_t lane, uint32_t column) {
  const int me = actor(w, t);
  if (prior.warp < 0 || prior.warp == me) return;
  // "The standard memory consistency model synchronization mechanisms also apply to the tcgen05
  // family of instructions" (PTX ISA 9.7.16.6.3): a release/acquire chain from the prior access
  // to this warp (bar.sync, a non-.relaxed mbarrier arrive and wait, a commit's arrival) orders
  // them. The fence pair below is what orders them otherwise (the ISA's canonical patterns,
  // whose mbarrier operations are .relaxed).
  if (prior.stamp && ordered_before(w, static_cast<uint16_t>(prior.agent + 1), prior.stamp)) return;
  uint64_t since = prior.time;
  std::string what = warp_name(prior.warp) + "'s " + prior_kind + " at PTX line " + std::to_string(prior.line);
  if (prior.mma) {
    const TmemPublication* p = t.published(*t.owner, prior.mma - 1);
    if (!p) return;  // check_cell reports it
    since = p->time;
    what += " (signalled by its commit)";
  } else if (t.warps[static_cast<size_t>(prior.warp)].before_fence <= prior.time) {
    w.fail(d, std::string(mine) + " of " + cell_name(lane, column) + " after " + what +
                  ", but that warp issued no tcgen05.fence::before_thread_sync after its access: the thread "
                  "synchronization between them does not order tcgen05 operations without it");
  }
  if (actor_state(w, t).after_fence <= since)
    w.fail(d, std::string(mine) + " of " + cell_name(lane, column) + " after " + what +
                  ", with no tcgen05.fence::after_thread_sync by this warp since: the thread synchronization does not "
                  "order its tcgen05 operations after the other warp's without it");
}

// ---- allocation ----

// Writes the address of an allocation to tcgen05.alloc's [dst] (a weak generic-proxy store).
void write_allocation(Warp& w, const Decoded& d, uint32_t mask, uint32_t taddr) {
  const int lane = __builtin_ctz(mask);
  const uint64_t dst = w.address(op(d, 0), lane, d);
  uint8_t* p = w.access(d.space == ptx::Space::shared ? ptx::Space::shared : ptx::Space::none, dst, 4, true, lane, d);
  std::memcpy(p, &taddr, 4);
}

// tcgen05.alloc.cta_group::2: one warp of each CTA of the pair, the first to come blocking until
// the other does (PTX ISA 9.7.16.5, "Issue Granularity"); both get the same columns, free in
// both CTAs' tensor memory.
Step run_alloc_pair(Warp& w, const Decoded& d, uint32_t mask, uint32_t n) {
  State& t = tensor_memory(*w.cta);
  const std::array<Cta*, 2> pair = pair_of(w, d, -1);
  Cta& peer = *pair[pair[0] == w.cta ? 1 : 0];
  State& pt = tensor_memory(peer);
  State::PairAllocation& mine = t.pair_alloc;
  if (mine.waiting) {
    if (!mine.done) {  // the peer's warp has not come yet
      w.wait = Wait{Wait::Kind::tmem_pair, n, 0, 0};
      return Step::blocked;
    }
    const uint32_t taddr = mine.taddr;
    mine = State::PairAllocation{};
    write_allocation(w, d, mask, taddr);
    return Step::next;
  }
  State::PairAllocation& theirs = pt.pair_alloc;
  if (!theirs.waiting || theirs.done) {
    mine = State::PairAllocation{true, false, n, 0, d.in->line, static_cast<int>(w.index)};
    w.wait = Wait{Wait::Kind::tmem_pair, n, 0, 0};
    return Step::blocked;
  }
  if (theirs.columns != n)
    w.fail(d, "tcgen05.alloc.cta_group::2 of " + std::to_string(n) + " columns, while the peer CTA's warp " +
                  std::to_string(theirs.warp) + " asks for " + std::to_string(theirs.columns) + " (PTX line " +
                  std::to_string(theirs.line) + ")");
  uint32_t start = 0;
  for (; start + n <= kTmemColumns; start += n) {
    bool overlap = false;
    for (const State* s : {&t, &pt})
      for (const auto& [first, a] : s->allocations) overlap |= first < start + n && start < first + a.columns;
    if (!overlap) break;
  }
  if (start + n > kTmemColumns) {  // until columns are freed in both
    w.wait = Wait{Wait::Kind::tmem_pair, n, 0, 0};
    return Step::blocked;
  }
  t.allocations[start] = State::Allocation{n, d.in->line, static_cast<int>(w.index)};
  pt.allocations[start] = State::Allocation{n, theirs.line, theirs.warp};
  theirs.done = true;
  theirs.taddr = start;
  write_allocation(w, d, mask, start);
  return Step::next;
}

Step run_alloc(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  State& t = tensor_memory(*w.cta);
  const uint64_t columns = uniform(w, d, mask, [&](int l) { return w.get(op(d, 1), l, d); }, "ncols");
  if (columns < 32 || columns > kTmemColumns || (columns & (columns - 1)))
    w.fail(d, "tcgen05.alloc of " + std::to_string(columns) + " columns: ncols must be a power of 2 in 32..512");
  if (!t.permit) w.fail(d, "tcgen05.alloc after this CTA's tcgen05.relinquish_alloc_permit");
  const uint32_t n = static_cast<uint32_t>(columns);
  note_group(w, d);
  if (d.imm == 2) return run_alloc_pair(w, d, mask, n);
  const uint32_t start = tensor_memory_first_fit(t, n);
  if (start == kTmemColumns) {
    bool others_hold = false;
    for (const auto& [first, a] : t.allocations) others_hold |= a.warp != static_cast<int>(w.index);
    if (!others_hold)
      w.fail(d, "deadlock: tcgen05.alloc of " + std::to_string(n) + " columns can never succeed: this CTA holds " +
                    std::to_string(t.allocated_columns()) +
                    " of the 512 columns, all allocated by this warp (the SM's other CTA is modelled absent)");
    // Until another warp of the CTA frees columns; the scheduler reports a deadlock if none does.
    w.wait = Wait{Wait::Kind::tmem_alloc, n, 0, 0};
    return Step::blocked;
  }
  t.allocations[start] = State::Allocation{n, d.in->line, static_cast<int>(w.index)};
  write_allocation(w, d, mask, start);  // lane 0, the first column
  return Step::next;
}

// With .cta_group::2 each CTA's warp frees its CTA's columns (the collective rendezvous is not
// modelled: the ISA lets dealloc block for it, or not).
Step run_dealloc(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  note_group(w, d);
  State& t = tensor_memory(*w.cta);
  const uint32_t taddr = static_cast<uint32_t>(uniform(w, d, mask, [&](int l) { return w.get(op(d, 0), l, d); }, "taddr"));
  const uint64_t columns = uniform(w, d, mask, [&](int l) { return w.get(op(d, 1), l, d); }, "ncols");
  const TmemCell at = tmem_cell(taddr);
  const auto it = t.allocations.find(at.column);
  if (at.lane != 0 || it == t.allocations.end() || it->second.columns != columns)
    w.fail(d, "tcgen05.dealloc of " + std::to_string(columns) + " columns at " + hex(taddr) +
                  ", which is not an allocation of this CTA (lane 0, its first column, its size)");
  for (uint32_t lane = 0; lane < kTmemLanes; ++lane)
    for (uint32_t col = at.column; col < at.column + columns; ++col) {
      TmemShadowCell& c = t.cell(lane, col);
      check_cell(w, d, t, c, true, "tcgen05.dealloc", lane, col, true);
      check_handoff(w, d, t, c.write, c.write.mma ? "tcgen05.mma" : "tcgen05.st", "tcgen05.dealloc", lane, col);
      check_handoff(w, d, t, c.read, c.read.mma ? "tcgen05.mma (A)" : "tcgen05.ld", "tcgen05.dealloc", lane, col);
      c = TmemShadowCell{};
    }
  t.allocations.erase(it);
  return Step::next;
}

Step run_relinquish(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  note_group(w, d);
  tensor_memory(*w.cta).permit = false;
  return Step::next;
}

// ---- loads, stores, waits, fences ----

uint32_t tmem_address(Warp& w, const Decoded& d, uint32_t mask, const ptx::Operand& o) {
  return static_cast<uint32_t>(uniform(w, d, mask, [&](int l) { return w.address(o, l, d); }, "the tensor-memory address"));
}

// One tcgen05.ld/st: its shape (Decoded::mode2) and .num (Decoded::imm), the register vector,
// .16x32bx2's immHalfSplitoff, the warp's address and the columns it spans from there.
struct Movement {
  TmemShape shape = TmemShape::k32x32b;
  uint32_t registers = 0, split = 0, taddr = 0, columns = 0;
  const ptx::Operand* regs = nullptr;
};

// ld: {r}, [taddr]{, split}; st: [taddr]{, split}, {r}. Checks the lane quarter (or half) the
// warp may access and that every column lies in an allocation.
Movement movement(Warp& w, const Decoded& d, uint32_t mask, State& t, bool load) {
  Movement m;
  m.shape = static_cast<TmemShape>(d.mode2);
  m.registers = tcgen05_registers(m.shape, d.imm);
  const bool split = m.shape == TmemShape::k16x32bx2;
  m.regs = &op(d, load ? 0 : (split ? 2 : 1));
  m.taddr = tmem_address(w, d, mask, op(d, load ? 1 : 0));
  if (split) m.split = static_cast<uint32_t>(w.get(op(d, load ? 2 : 1), __builtin_ctz(mask), d));
  const TmemCell base = tmem_cell(m.taddr);
  for (int lane = 0; lane < 32; ++lane)
    for (uint32_t r = 0; r < m.registers; ++r)
      m.columns = std::max(m.columns, tcgen05_ld_st_cell(m.shape, m.taddr, lane, static_cast<int>(r), m.split).column -
                                          base.column + 1);
  const std::string problem = check_tcgen05_access(m.shape, m.taddr, static_cast<int>(w.index), m.columns);
  if (!problem.empty()) w.fail(d, problem);
  const std::string alloc = t.check_allocated(base.column, m.columns);
  if (!alloc.empty()) w.fail(d, alloc);
  return m;
}

Step run_load(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  State& t = tensor_memory(*w.cta);
  const Movement m = movement(w, d, mask, t, true);
  const ptx::Operand& regs = *m.regs;
  const uint64_t now = ++t.clock;
  for (uint32_t r = 0; r < m.registers; ++r) {
    const uint32_t slot = regs.elements[r].reg;
    if (w.poisoned[slot])
      w.fail(d, "tcgen05.ld writes register " + w.cta->launch->program->function->register_names[slot] +
                    ", which an earlier tcgen05.ld still writes (no tcgen05.wait::ld between them)");
  }
  for (int lane = 0; lane < 32; ++lane)
    for (uint32_t r = 0; r < m.registers; ++r) {
      const TmemCell cell = tcgen05_ld_st_cell(m.shape, m.taddr, lane, static_cast<int>(r), m.split);
      const uint32_t tl = cell.lane, col = cell.column;
      TmemShadowCell& c = t.cell(tl, col);
      check_cell(w, d, t, c, false, "tcgen05.ld", tl, col);
      check_handoff(w, d, t, c.write, c.write.mma ? "tcgen05.mma" : "tcgen05.st", "tcgen05.ld", tl, col);
      c.read = TmemAccess{static_cast<int>(w.index), now, d.in->line, 0, w.agent, w.vc[w.agent]};
      if (c.ld_pending != static_cast<int>(w.index)) t.warp(w).ld_cells.push_back(tl * kTmemColumns + col);
      c.ld_pending = static_cast<int>(w.index);
      w.reg(regs.elements[r].reg, lane) = c.value;
    }
  for (uint32_t r = 0; r < m.registers; ++r) {
    const uint32_t slot = regs.elements[r].reg;
    w.written_at[slot] = w.instructions + 1;
    poison_ld(w, slot);
  }
  return Step::next;
}

Step run_store(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  State& t = tensor_memory(*w.cta);
  const Movement m = movement(w, d, mask, t, false);
  const ptx::Operand& regs = *m.regs;
  const uint64_t now = ++t.clock;
  State::WarpState& me = t.warp(w);
  for (int lane = 0; lane < 32; ++lane)
    for (uint32_t r = 0; r < m.registers; ++r) {
      const TmemCell cell = tcgen05_ld_st_cell(m.shape, m.taddr, lane, static_cast<int>(r), m.split);
      const uint32_t tl = cell.lane, col = cell.column;
      TmemShadowCell& c = t.cell(tl, col);
      check_cell(w, d, t, c, true, "tcgen05.st", tl, col);
      check_handoff(w, d, t, c.write, c.write.mma ? "tcgen05.mma" : "tcgen05.st", "tcgen05.st", tl, col);
      check_handoff(w, d, t, c.read, c.read.mma ? "tcgen05.mma (A)" : "tcgen05.ld", "tcgen05.st", tl, col);
      c.value = static_cast<uint32_t>(w.get(regs.elements[r], lane, d));
      c.write = TmemAccess{static_cast<int>(w.index), now, d.in->line, 0, w.agent, w.vc[w.agent]};
      c.st_pending = static_cast<int>(w.index);
      me.st_cells.push_back(tl * kTmemColumns + col);
    }
  return Step::next;
}

Step run_wait_ld(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  // Every register an ld wrote (Warp::kTcgen05LdPoison), and the cells it read.
  for (uint8_t& p : w.poisoned)
    if (p & Warp::kTcgen05LdPoison) {
      p &= static_cast<uint8_t>(~Warp::kTcgen05LdPoison);
      if (!p) --w.poisoned_count;
    }
  State& t = tensor_memory(*w.cta);
  State::WarpState& me = t.warp(w);
  for (uint32_t index : me.ld_cells)
    if (t.cells[index].ld_pending == static_cast<int>(w.index)) t.cells[index].ld_pending = -1;
  me.ld_cells.clear();
  return Step::next;
}

Step run_wait_st(Warp& w, const Decoded& d, uint32_t mask) {
  require_whole_warp(w, d, mask);
  State& t = tensor_memory(*w.cta);
  State::WarpState& me = t.warp(w);
  for (uint32_t index : me.st_cells)
    if (t.cells[index].st_pending == static_cast<int>(w.index)) t.cells[index].st_pending = -1;
  me.st_cells.clear();
  return Step::next;
}

Step run_fence_before(Warp& w, const Decoded&, uint32_t) {
  State& t = tensor_memory(*w.cta);
  t.warp(w).before_fence = ++t.clock;
  mirror_fence(w, false);
  return Step::next;
}

Step run_fence_after(Warp& w, const Decoded&, uint32_t) {
  State& t = tensor_memory(*w.cta);
  t.warp(w).after_fence = ++t.clock;
  mirror_fence(w, true);
  return Step::next;
}

// ---- the tensor core ----

struct MmaShape {
  uint32_t m = 0, n = 0, k = 0, element_bytes = 0;
  uint32_t format = 0;  // a_format (= b_format)
};

// The tensor-memory lane of row `row` of an M-row D (PTX ISA data-path layouts D and F).
uint32_t lane_of_row(uint32_t m, uint32_t row) { return m == 128 ? row : 32 * (row / 16) + row % 16; }

float element_value(uint32_t format, uint32_t raw) {
  switch (format) {
    case 0: return from_f16(static_cast<uint16_t>(raw));
    case 1: return from_bf16(static_cast<uint16_t>(raw));
    default: return f32(raw & 0xffffe000u);  // tf32: the tensor core ignores the low 13 mantissa bits
  }
}

MmaShape check_instruction_descriptor(Warp& w, const Decoded& d, uint32_t idesc) {
  const UmmaInstrDescriptor f = decode_umma_instr_descriptor(idesc);
  const bool tf32 = d.mode2 == 1;
  auto refuse = [&](const std::string& why) {
    w.fail(d, "tcgen05.mma instruction descriptor " + hex(idesc) + ": " + why);
  };
  if (f.sparse || f.sparse_id2) refuse("sparse MMA is not implemented by ptxemu");
  if (f.saturate) refuse("saturate is for integer kinds only");
  if (f.max_shift) refuse("max shift is for .ws only");
  if (f.c_format != 1) refuse("D formats other than f32 (c_format " + std::to_string(f.c_format) + ") are not implemented by ptxemu");
  if (tf32 ? (f.a_format != 2 || f.b_format != 2) : (f.a_format > 1 || f.b_format != f.a_format))
    refuse("A/B formats " + std::to_string(f.a_format) + "/" + std::to_string(f.b_format) + " do not fit ." +
           (tf32 ? "kind::tf32 (2/2)" : "kind::f16 (0/0 f16 or 1/1 bf16)"));
  if (d.imm == 2) {  // Table 39: M 128 or 256, N 16..256 in steps of 16
    if (f.m != 128 && f.m != 256) refuse("M = " + std::to_string(f.m) + " (cta_group::2 has M 128 or 256)");
    if (f.m == 128)
      refuse("M = 128 with cta_group::2 (data-path layout B) is not implemented by ptxemu");
  } else if (f.m != 64 && f.m != 128) {
    refuse("M = " + std::to_string(f.m) + " (cta_group::1 has M 64 or 128)");
  }
  const uint32_t n_step = f.m == 64 ? 8 : 16;
  if (f.n < n_step || f.n > 256 || f.n % n_step)
    refuse("N = " + std::to_string(f.n) + " (M = " + std::to_string(f.m) + " needs N in " + std::to_string(n_step) +
           "..256, a multiple of " + std::to_string(n_step) + ")");
  MmaShape s;
  s.m = f.m;
  s.n = f.n;
  s.element_bytes = tf32 ? 4 : 2;
  s.k = 32 / s.element_bytes;
  s.format = f.a_format;
  return s;
}

// Reads an operand (rows x K) through its shared-memory descriptor, checking and marking the
// bytes read until the MMA completes.
// `source`: the CTA whose shared memory holds it (the peer's half with cta_group::2).
std::vector<float> read_operand(Warp& w, const Decoded& d, Cta& source, uint64_t desc, Major major, uint32_t rows,
                                const MmaShape& s, float sign, std::vector<uint32_t>& marked, const char* name) {
  const std::string problem = check_umma_smem_descriptor(desc, major);
  if (!problem.empty()) w.fail(d, std::string("tcgen05.mma ") + name + " descriptor " + hex(desc) + ": " + problem);
  SharedMemory& smem = source.smem;
  std::vector<float> out(size_t{rows} * s.k);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < s.k; ++k) {
      const uint32_t a = umma_operand_element_address(desc, major, static_cast<int>(r), static_cast<int>(k),
                                                      static_cast<int>(s.element_bytes));
      if (a < kSharedBase || a + s.element_bytes > smem.limit)
        w.fail(d, std::string("tcgen05.mma ") + name + " element (" + std::to_string(r) + "," + std::to_string(k) +
                      ") at shared " + hex(a) + " lies outside the CTA's shared memory");
      for (uint32_t b = 0; b < s.element_bytes; ++b) {
        ShadowByte& sh = smem.shadow[a + b];
        if (sh.async_writes)
          w.fail(d, std::string("tcgen05.mma reads ") + name + " at shared " + hex(a + b) +
                        " while a TMA load still writes it: a missing mbarrier wait");
        if (sh.unfenced_writer)
          w.fail(d, std::string("tcgen05.mma reads ") + name + " at shared " + hex(a + b) + ", written by warp " +
                        std::to_string(sh.unfenced_writer - 1) +
                        " with no fence.proxy.async since: the async proxy may not see the write");
        if (sh.mbarrier) w.fail(d, std::string("tcgen05.mma reads the mbarrier object at shared ") + hex(a + b));
        // The tensor core reads after the issue: a generic write another warp made must be
        // ordered before it (races.h).
        const std::string race = async_access(w, sh, false);
        if (!race.empty()) w.fail(d, std::string("tcgen05.mma ") + name + " at shared " + hex(a + b) + ": " + race);
        ++sh.async_reads;
        marked.push_back(a + b);
      }
      uint32_t raw = 0;
      std::memcpy(&raw, smem.bytes.data() + a, s.element_bytes);
      out[size_t{r} * s.k + k] = sign * element_value(s.format, raw);
    }
  return out;
}

// The tensor core takes in what an issuer had done (races.h); its clock starts at epoch 1.
void tensor_core_acquire(Cta& cta, State& t, const VectorClock& issued) {
  const uint32_t agent = tensor_core_agent(cta);
  if (t.vc.size() <= agent) t.vc.resize(std::max<size_t>(issued.size(), agent + 1), 0);
  if (!t.vc[agent]) t.vc[agent] = 1;
  merge(t.vc, issued);
}

// Adds `entry` to the CTA's tensor-core pipe as an async op the scheduler completes (in order).
void enqueue(Warp& w, const Decoded& d, int lane, State& t, std::function<void()> run) {
  Cta& cta = *w.cta;
  auto async = std::make_unique<AsyncOp>();
  async->what = w.where(d, lane);
  AsyncOp* handle = async.get();
  async->complete = [&cta, handle] { tensor_memory(cta).drain_through(handle); };
  t.pipe.push_back(State::PipeEntry{handle, std::move(run)});
  cta.add_async(std::move(async));
}

// [d], a-desc | [a-tmem], b-desc, idesc, {disable-output-lane x4|x8}?, enable-input-d {, scale-input-d}
// With .cta_group::2 the MMA works on the CTA pair (PTX ISA 9.7.16.10, data-path layout A for
// M = 256): the even CTA holds rows 0..M/2-1 of A and D and rows 0..N/2-1 of B, the odd CTA the
// other halves, each at the same shared and tensor-memory addresses (CuTe's 2x1SM atoms lay
// them out so: ALayout, BLayout and CLayout of SM100_MMA_F16BF16_2x1SM_SS).
void issue_mma(Warp& w, const Decoded& d, int lane) {
  Cta& cta = *w.cta;
  State& t = tensor_memory(cta);
  const bool ts = d.mode == 1, has_mask = d.vector != 0, pair = d.imm == 2;
  note_group(w, d);
  const uint32_t d_taddr = static_cast<uint32_t>(w.address(op(d, 0), lane, d));
  const uint64_t a_operand = ts ? w.address(op(d, 1), lane, d) : w.get(op(d, 1), lane, d);
  const uint64_t b_desc = w.get(op(d, 2), lane, d);
  const uint32_t idesc = static_cast<uint32_t>(w.get(op(d, 3), lane, d));
  std::array<uint32_t, 8> disabled{};
  size_t next = 4;
  if (has_mask) {
    for (size_t k = 0; k < d.vector; ++k) disabled[k] = static_cast<uint32_t>(w.get(op(d, 4).elements[k], lane, d));
    next = 5;
  }
  const bool accumulate = w.get(op(d, next), lane, d) != 0;
  uint32_t scale_input_d = 0;
  if (d.in->operands.size() > next + 1) {
    scale_input_d = static_cast<uint32_t>(w.get(op(d, next + 1), lane, d));
    if (scale_input_d > 15) w.fail(d, "scale-input-d " + std::to_string(scale_input_d) + " is not in 0..15", lane);
  }
  const MmaShape s = check_instruction_descriptor(w, d, idesc);
  const UmmaInstrDescriptor f = decode_umma_instr_descriptor(idesc);
  // The CTAs whose tensor memory D lives in, and the rows of A and D and of B each holds.
  std::vector<Cta*> ctas{&cta};
  if (pair) {
    const std::array<Cta*, 2> p = pair_of(w, d, lane);
    ctas = {p[0], p[1]};
    if (ts) w.fail(d, "tcgen05.mma.cta_group::2 with A in tensor memory is not implemented by ptxemu", lane);
    for (const Cta* c : ctas)
      if (c->exited) w.fail(d, "tcgen05.mma.cta_group::2 while CTA rank " + std::to_string(c->rank) + " of the pair has exited", lane);
  }
  const uint32_t parts = static_cast<uint32_t>(ctas.size()), m_part = s.m / parts, n_part = s.n / parts;
  const TmemCell dc = tmem_cell(d_taddr);
  if (dc.lane != 0) w.fail(d, "tcgen05.mma D at " + hex(d_taddr) + ": the lane field must be 0", lane);
  for (Cta* c : ctas)
    if (const std::string p = tensor_memory(*c).check_allocated(dc.column, s.n); !p.empty())
      w.fail(d, "tcgen05.mma D" + std::string(c == &cta ? "" : " in the peer CTA") + ": " + p, lane);
  TmemCell ac{};
  const uint32_t a_columns = s.k * s.element_bytes / 4;
  if (ts) {
    if (s.m != 128) w.fail(d, "tcgen05.mma with A in tensor memory and M = 64 is not implemented by ptxemu", lane);
    if (f.a_major != Major::kK) w.fail(d, "tcgen05.mma with A in tensor memory must have a K-major A", lane);
    ac = tmem_cell(static_cast<uint32_t>(a_operand));
    if (ac.lane != 0) w.fail(d, "tcgen05.mma A at " + hex(a_operand) + ": the lane field must be 0", lane);
    if (const std::string p = t.check_allocated(ac.column, a_columns); !p.empty()) w.fail(d, "tcgen05.mma A: " + p, lane);
  }
  // Shared-memory operands, read now (their bytes stay marked until completion), each CTA's
  // rows after the previous CTA's.
  std::vector<std::vector<uint32_t>> marked(parts);
  std::vector<float> a, b;
  for (uint32_t h = 0; h < parts; ++h) {
    if (!ts) {
      const std::vector<float> part = read_operand(w, d, *ctas[h], a_operand, f.a_major, m_part, s, f.a_negate ? -1.f : 1.f,
                                                   marked[h], "A");
      a.insert(a.end(), part.begin(), part.end());
    }
    const std::vector<float> part = read_operand(w, d, *ctas[h], b_desc, f.b_major, n_part, s, f.b_negate ? -1.f : 1.f,
                                                 marked[h], "B");
    b.insert(b.end(), part.begin(), part.end());
  }

  // Each CTA's tensor memory records the MMA; D cells are poisoned until it completes.
  std::vector<uint64_t> seqs(parts);
  auto enabled = [disabled](uint32_t h, uint32_t tl) { return !(disabled[4 * h + tl / 32] >> (tl % 32) & 1); };
  for (uint32_t h = 0; h < parts; ++h) {
    State& th = tensor_memory(*ctas[h]);
    const int who = actor(w, th);
    const char* mine = ctas[h] == &cta ? "tcgen05.mma (D)" : "tcgen05.mma (D, in the peer CTA)";
    seqs[h] = th.mmas.size();
    th.mmas.push_back(TmemMmaRecord{who, d.in->line, false, {}});
    const uint64_t now = ++th.clock;
    for (uint32_t row = 0; row < m_part; ++row) {
      const uint32_t tl = lane_of_row(m_part, row);
      if (!enabled(h, tl)) continue;
      for (uint32_t col = dc.column; col < dc.column + s.n; ++col) {
        TmemShadowCell& c = th.cell(tl, col);
        check_cell(w, d, th, c, true, mine, tl, col);
        check_handoff(w, d, th, c.write, c.write.mma ? "tcgen05.mma" : "tcgen05.st", mine, tl, col);
        check_handoff(w, d, th, c.read, c.read.mma ? "tcgen05.mma (A)" : "tcgen05.ld", mine, tl, col);
        ++c.mma_writes;
        c.write = TmemAccess{who, now, d.in->line, seqs[h] + 1, w.agent, w.vc[w.agent]};
      }
    }
    if (ctas[h] == &cta) t.unpublished[w.lane_thread(lane)].push_back(seqs[h]);
    else t.peer_unpublished[w.lane_thread(lane)].emplace_back(ctas[h], seqs[h]);
  }
  if (ts) {
    const uint64_t now = t.clock;
    for (uint32_t row = 0; row < s.m; ++row)
      for (uint32_t col = ac.column; col < ac.column + a_columns; ++col) {
        TmemShadowCell& c = t.cell(row, col);
        check_cell(w, d, t, c, false, "tcgen05.mma (A)", row, col);
        check_handoff(w, d, t, c.write, c.write.mma ? "tcgen05.mma" : "tcgen05.st", "tcgen05.mma (A)", row, col);
        ++c.mma_reads;
        c.read = TmemAccess{static_cast<int>(w.index), now, d.in->line, seqs[0] + 1, w.agent, w.vc[w.agent]};
      }
  }

  const bool a_negate = f.a_negate;
  // The tensor core of the issuing CTA runs the MMA after everything its issuer had done (races.h);
  // for a pair it reads both CTAs' operands, and its commit's arrivals publish them.
  const std::string what = w.where(d, lane);
  enqueue(w, d, lane, t, [&cta, ctas, s, seqs, m_part, ts, a = std::move(a), b = std::move(b), marked = std::move(marked), dc,
                          ac, a_columns, accumulate, scale_input_d, enabled, a_negate, what, issued = w.vc] {
    for (const Cta* c : ctas)
      if (c->exited)
        throw EmulationError(what + ": CTA rank " + std::to_string(c->rank) +
                             " of the pair exited while the tcgen05.mma still used its shared and tensor memory");
    tensor_core_acquire(cta, tensor_memory(cta), issued);
    std::vector<float> av = a;
    if (ts) {  // A from tensor memory: row m is lane m; K elements packed low half first
      State& t = tensor_memory(*ctas[0]);
      av.assign(size_t{s.m} * s.k, 0);
      for (uint32_t row = 0; row < s.m; ++row)
        for (uint32_t k = 0; k < s.k; ++k) {
          const uint32_t per_column = 4 / s.element_bytes;
          const uint32_t v = t.cell(row, ac.column + k / per_column).value;
          const uint32_t raw = per_column == 1 ? v : v >> (16 * (k % per_column)) & 0xffff;
          av[size_t{row} * s.k + k] = (a_negate ? -1.f : 1.f) * element_value(s.format, raw);
        }
      for (uint32_t row = 0; row < s.m; ++row)
        for (uint32_t col = ac.column; col < ac.column + a_columns; ++col) --t.cell(row, col).mma_reads;
    }
    const float input_scale = std::ldexp(1.0f, -static_cast<int>(scale_input_d));
    for (uint32_t h = 0; h < ctas.size(); ++h) {
      State& th = tensor_memory(*ctas[h]);
      for (uint32_t row = 0; row < m_part; ++row) {
        const uint32_t tl = lane_of_row(m_part, row);
        if (!enabled(h, tl)) continue;
        for (uint32_t n = 0; n < s.n; ++n) {
          TmemShadowCell& c = th.cell(tl, dc.column + n);
          float acc = accumulate ? f32(c.value) * input_scale : 0.0f;
          // In k order; products of f16/bf16/tf32 inputs are exact in f32: an fma chain.
          const float* ar = &av[size_t{h * m_part + row} * s.k];
          const float* br = &b[size_t{n} * s.k];
          for (uint32_t k = 0; k < s.k; ++k) acc += ar[k] * br[k];
          c.value = static_cast<uint32_t>(bits(acc));
          --c.mma_writes;
        }
      }
      // Its operands were read until now, by the issuing CTA's tensor core: a later write (a TMA
      // refilling the stage) must be ordered after the commit that publishes this MMA (races.h).
      for (uint32_t byte : marked[h]) {
        ShadowByte& shadow = ctas[h]->smem.shadow[byte];
        --shadow.async_reads;
        record_tensor_core_read(tensor_core_agent(cta), tensor_memory(cta).vc, shadow);
      }
      th.mmas[seqs[h]].complete = true;
    }
  });
}

Step run_mma(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) { issue_mma(w, d, lane); });
  return Step::next;
}

// tcgen05.commit.cta_group::{1,2}.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64
//   [mbar]{, ctaMask}
// Arrives once, after the MMAs its thread issued before it, on the mbarrier at mbar or, with
// .multicast::cluster, at mbar's offset in every CTA of ctaMask. An MMA's writes into a CTA's
// tensor memory are published by an arrival in that CTA (its threads can wait on no other).
Step run_commit(Warp& w, const Decoded& d, uint32_t mask) {
  Cta& cta = *w.cta;
  State& t = tensor_memory(cta);
  note_group(w, d);
  for_each_lane(mask, [&](int lane) {
    uint64_t address = w.address(op(d, 0), lane, d);
    if (d.space == ptx::Space::none) {
      if (window_of(address) != Window::shared) w.fail(d, "tcgen05.commit's mbarrier is not a shared address", lane);
      address -= kSharedWindow;
    }
    const uint32_t mbar = static_cast<uint32_t>(address), offset = shared_offset(mbar);
    std::vector<Cta*> targets;
    if (d.mode == 1) {
      const uint64_t cta_mask = w.get(op(d, 1), lane, d) & 0xffff;
      const size_t size = cta.cluster ? cta.cluster->ctas.size() : 1;
      if (cta_mask == 0) w.fail(d, "tcgen05.commit multicast with an empty ctaMask", lane);
      if (cta_mask >> size)
        w.fail(d, "tcgen05.commit ctaMask " + hex(cta_mask) + " names CTAs outside the cluster of " + std::to_string(size), lane);
      for (uint32_t r = 0; r < size; ++r)
        if (cta_mask >> r & 1) targets.push_back(&mbarrier_owner(w, d, cluster_shared_address(r, offset)));
    } else {
      targets.push_back(&mbarrier_owner(w, d, mbar));
    }
    for (Cta* x : targets) mbarrier_at(w, d, cluster_shared_address(x->rank, offset));
    // The MMAs of this thread it tracks: those no completed commit phase covers yet.
    std::vector<uint64_t>& mine = t.unpublished[w.lane_thread(lane)];
    std::erase_if(mine, [&](uint64_t seq) { return t.published(cta, seq) != nullptr; });
    std::vector<std::pair<Cta*, uint64_t>>& peers = t.peer_unpublished[w.lane_thread(lane)];
    std::erase_if(peers, [](const std::pair<Cta*, uint64_t>& m) {
      return tensor_memory(*m.first).published(*m.first, m.second) != nullptr;
    });
    Warp* issuer = &w;
    // Its arrivals publish what the issuer had done by the commit (not what it does while the
    // commit waits in the pipe) and what the tensor core did before it.
    VectorClock committed;
    release(w, committed);
    enqueue(w, d, lane, t, [&cta, issuer, &d, offset, targets, tracked = mine, peer_tracked = peers, committed,
                            what = w.where(d, lane)] {
      State& t = tensor_memory(cta);
      tensor_core_acquire(cta, t, committed);
      // The MMAs it tracks are complete. Its arrival on each mbarrier is asynchronous too, and
      // the PTX ISA orders it after those MMAs only, not with other commits' arrivals: it lands
      // when the scheduler decides (so a CTA that exits before waiting for it is reported).
      for (Cta* x : targets) {
        auto arrival = std::make_unique<AsyncOp>();
        arrival->what = what;
        arrival->signals_cta = x;
        arrival->signals_mbarrier = offset;
        arrival->complete = [&cta, x, issuer, &d, offset, tracked, peer_tracked, released = t.vc] {
          const uint32_t at = cluster_shared_address(x->rank, offset);
          const uint64_t phase = mbarrier_at(*issuer, d, at).phase;
          State& tx = tensor_memory(*x);
          const uint64_t now = ++tx.clock;
          if (x == &cta)
            for (uint64_t seq : tracked) tx.mmas[seq].publications.push_back(TmemPublication{offset, phase + 1, now});
          for (const auto& [peer, seq] : peer_tracked)
            if (peer == x) tx.mmas[seq].publications.push_back(TmemPublication{offset, phase + 1, now});
          mbarrier_arrive(*issuer, d, at, 1, &released);
        };
        // It writes x's shared memory: x exiting before it lands is the finding, not the issuer.
        x->add_async(std::move(arrival));
      }
      ++t.vc[tensor_core_agent(cta)];  // the tensor core's next epoch: later reads need a later commit
    });
  });
  return Step::next;
}

}  // namespace

void decode_tcgen05(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (in.parts.size() < 2) throw Unsupported{"tcgen05 operation"};
  const std::string& what = in.parts[1];
  d.space = m.space;
  // d.imm: the .cta_group (1, or 2 for a CTA pair) of alloc, dealloc, relinquish, mma, commit.
  auto need_group = [&] {
    if (m.has("cta_group::2")) d.imm = 2;
    else if (m.has("cta_group::1")) d.imm = 1;
    else throw Unsupported{"a tcgen05 instruction without .cta_group"};
  };
  if (what == "alloc") {
    need_group();
    d.run = run_alloc;
  } else if (what == "dealloc") {
    need_group();
    d.run = run_dealloc;
  } else if (what == "relinquish_alloc_permit") {
    need_group();
    d.run = run_relinquish;
  } else if (what == "mma") {
    need_group();
    if (m.has("ws")) throw Unsupported{".ws (weight-stationary) MMA"};
    if (m.has("sp")) throw Unsupported{"sparse MMA"};
    for (const std::string& word : m.words)
      if (word.rfind("block_scale", 0) == 0 || word.rfind("collector", 0) == 0 || word.rfind("ashift", 0) == 0)
        throw Unsupported{"." + word};
    if (m.has("kind::f16")) d.mode2 = 0;
    else if (m.has("kind::tf32")) d.mode2 = 1;
    else throw Unsupported{"kinds other than .kind::f16 and .kind::tf32"};
    const auto& ops = in.operands;
    if (ops.size() < 5 || ops[0].kind != ptx::Operand::Kind::address) throw Unsupported{"operand form"};
    d.mode = ops[1].kind == ptx::Operand::Kind::address;  // TS: A in tensor memory
    const bool mask = ops[4].kind == ptx::Operand::Kind::vector;
    const size_t words = d.imm == 2 ? 8 : 4;  // one bit per lane of the CTA or the pair
    if (mask && ops[4].elements.size() != words)
      throw Unsupported{"a disable-output-lane vector of other than " + std::to_string(words) + " words"};
    d.vector = mask ? static_cast<uint8_t>(words) : 0;
    const size_t min = mask ? 6 : 5;
    if (ops.size() < min || ops.size() > min + 1) throw Unsupported{"operand count"};
    d.run = run_mma;
  } else if (what == "commit") {
    need_group();
    d.mode = m.has("multicast::cluster");
    if (in.operands.size() != (d.mode ? 2u : 1u)) throw Unsupported{"operand form"};
    if (!m.has("mbarrier::arrive::one")) throw Unsupported{"commit forms other than .mbarrier::arrive::one"};
    d.run = run_commit;
  } else if (what == "ld" || what == "st") {
    const bool load = what == "ld";
    static const std::pair<const char*, TmemShape> shapes[] = {
        {"32x32b", TmemShape::k32x32b},   {"16x64b", TmemShape::k16x64b},     {"16x128b", TmemShape::k16x128b},
        {"16x256b", TmemShape::k16x256b}, {"16x32bx2", TmemShape::k16x32bx2},
    };
    bool shaped = false;
    for (const auto& [name, shape] : shapes)
      if (m.has(name)) d.mode2 = static_cast<uint8_t>(shape), shaped = true;
    if (!shaped) throw Unsupported{"a data-movement shape other than .32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2"};
    if (m.has("pack::16b") || m.has("unpack::16b")) throw Unsupported{".pack::16b / .unpack::16b"};
    if (m.has("red")) throw Unsupported{".red"};
    uint32_t n = 0;
    for (const std::string& word : m.words)
      if (word.size() > 1 && word[0] == 'x' && std::all_of(word.begin() + 1, word.end(), ::isdigit)) n = std::stoul(word.substr(1));
    if (n == 0 || n > 128 || (n & (n - 1))) throw Unsupported{"a .num other than .x1 .. .x128"};
    d.imm = n;
    const TmemShape shape = static_cast<TmemShape>(d.mode2);
    const uint32_t registers = tcgen05_registers(shape, n);
    if (registers > 128) throw Unsupported{"more than 128 registers"};
    const bool split = shape == TmemShape::k16x32bx2;
    const auto& ops = in.operands;
    const ptx::Operand& regs = ops[load ? 0 : (split ? 2 : 1)];
    const ptx::Operand& address = ops[load ? 1 : 0];
    if (ops.size() != (split ? 3u : 2u) || address.kind != ptx::Operand::Kind::address) throw Unsupported{"operand form"};
    if (split && ops[load ? 2 : 1].kind != ptx::Operand::Kind::imm) throw Unsupported{"an immHalfSplitoff that is no immediate"};
    if (regs.kind != ptx::Operand::Kind::vector || regs.elements.size() != registers)
      throw Unsupported{"a register vector of other than " + std::to_string(registers) + " registers"};
    for (const ptx::Operand& e : regs.elements)
      if (e.kind != ptx::Operand::Kind::reg) throw Unsupported{"non-register vector elements"};
    d.run = load ? run_load : run_store;
  } else if (what == "wait::ld") {
    d.run = run_wait_ld;
  } else if (what == "wait::st") {
    d.run = run_wait_st;
  } else if (what == "fence::before_thread_sync") {
    d.run = run_fence_before;
  } else if (what == "fence::after_thread_sync") {
    d.run = run_fence_after;
  } else {
    throw Unsupported{"tcgen05." + what};
  }
}

}  // namespace kgen::emu
