// A warp's operands and memory accesses, with the checks every instruction shares: poisoned
// registers, the allocation table, shared-memory bounds and shadow state.
#include <sstream>

#include "core/lanes.h"
#include "core/machine.h"
#include "core/races.h"

namespace kgen::emu {
namespace {

uint64_t special_value(const Warp& w, ptx::Special s, int lane) {
  const Cta& cta = *w.cta;
  const Launch& l = *cta.launch;
  const uint32_t thread = w.lane_thread(lane);
  const uint32_t bx = l.block.x, by = l.block.y;
  const uint32_t lane_bit = 1u << lane;
  switch (s) {
    case ptx::Special::tid_x: return thread % bx;
    case ptx::Special::tid_y: return thread / bx % by;
    case ptx::Special::tid_z: return thread / (bx * by);
    case ptx::Special::ntid_x: return l.block.x;
    case ptx::Special::ntid_y: return l.block.y;
    case ptx::Special::ntid_z: return l.block.z;
    case ptx::Special::ctaid_x: return cta.id.x;
    case ptx::Special::ctaid_y: return cta.id.y;
    case ptx::Special::ctaid_z: return cta.id.z;
    case ptx::Special::nctaid_x: return l.grid.x;
    case ptx::Special::nctaid_y: return l.grid.y;
    case ptx::Special::nctaid_z: return l.grid.z;
    case ptx::Special::laneid: return static_cast<uint64_t>(lane);
    case ptx::Special::warpid: return w.index;
    case ptx::Special::nwarpid: return 64;
    case ptx::Special::smid: return cta.linear_id % l.sm_count;
    case ptx::Special::nsmid: return l.sm_count;
    case ptx::Special::gridid: return 1;
    case ptx::Special::clock: case ptx::Special::clock64: case ptx::Special::globaltimer: return w.instructions;
    case ptx::Special::lanemask_eq: return lane_bit;
    case ptx::Special::lanemask_lt: return lane_bit - 1;
    case ptx::Special::lanemask_le: return (lane_bit - 1) | lane_bit;
    case ptx::Special::lanemask_gt: return ~((lane_bit - 1) | lane_bit) & 0xffffffffu;
    case ptx::Special::lanemask_ge: return ~(lane_bit - 1) & 0xffffffffu;
    case ptx::Special::dynamic_smem_size: return l.dynamic_shared;
    case ptx::Special::total_smem_size: return l.program->static_shared + l.dynamic_shared;
    // Clusters tile the grid: a CTA's cluster is its ctaid divided by the cluster shape, its
    // place in the cluster the remainder, its rank that place in x-fastest order.
    case ptx::Special::cluster_ctarank: return cta.rank;
    case ptx::Special::cluster_nctarank: return l.cluster.count();
    case ptx::Special::clusterid_x: return cta.id.x / l.cluster.x;
    case ptx::Special::clusterid_y: return cta.id.y / l.cluster.y;
    case ptx::Special::clusterid_z: return cta.id.z / l.cluster.z;
    case ptx::Special::nclusterid_x: return l.grid.x / l.cluster.x;
    case ptx::Special::nclusterid_y: return l.grid.y / l.cluster.y;
    case ptx::Special::nclusterid_z: return l.grid.z / l.cluster.z;
    case ptx::Special::cluster_ctaid_x: return cta.id.x % l.cluster.x;
    case ptx::Special::cluster_ctaid_y: return cta.id.y % l.cluster.y;
    case ptx::Special::cluster_ctaid_z: return cta.id.z % l.cluster.z;
    case ptx::Special::cluster_nctaid_x: return l.cluster.x;
    case ptx::Special::cluster_nctaid_y: return l.cluster.y;
    case ptx::Special::cluster_nctaid_z: return l.cluster.z;
    case ptx::Special::is_explicit_cluster: return l.explicit_cluster ? 1 : 0;
  }
  return 0;
}

}  // namespace

std::string Warp::where(const Decoded& d, int lane) const {
  const Launch& l = *cta->launch;
  std::ostringstream s;
  s << "kernel " << l.program->function->name << ", CTA (" << cta->id.x << "," << cta->id.y << "," << cta->id.z
    << "), warp " << index;
  if (lane >= 0) s << ", thread " << lane_thread(lane);
  if (d.in) s << ", PTX line " << d.in->line << " '" << d.in->opcode << "'";
  return s.str();
}

void Warp::fail(const Decoded& d, const std::string& message, int lane) const {
  throw EmulationError(where(d, lane) + ": " + message);
}

uint64_t Warp::get(const ptx::Operand& o, int lane, const Decoded& d) {
  switch (o.kind) {
    case ptx::Operand::Kind::reg: {
      // A tcgen05.ld destination alone may be read before tcgen05.wait::ld (machine.h).
      if (poisoned_count && poisoned[o.reg] && poisoned[o.reg] != kTcgen05LdPoison)
        fail(d, "reads register " + cta->launch->program->function->register_names[o.reg] +
                    " while an asynchronous operation (wgmma) still writes it: a missing wait", lane);
      if (!written_at[o.reg])
        fail(d, "reads register " + cta->launch->program->function->register_names[o.reg] +
                    ", which nothing has written", lane);
      read_at[o.reg] = instructions + 1;
      const uint64_t v = reg(o.reg, lane);
      return o.negate ? !v : v;
    }
    case ptx::Operand::Kind::imm: return o.bits;
    case ptx::Operand::Kind::special: return special_value(*this, o.special, lane);
    case ptx::Operand::Kind::symbol: {
      const Program& p = *cta->launch->program;
      // A symbol's value is its address in its own state space (cvta makes it generic).
      if (o.symbol.kind == ptx::Symbol::Kind::param) return p.param_offset[o.symbol.index];
      // A shared variable's address carries the CTA's rank (memory.h).
      if (o.symbol.kind == ptx::Symbol::Kind::variable) {
        const uint64_t rank_field = uint64_t{cta->rank} << kClusterRankShift;
        if (o.symbol.index & ptx::Symbol::kFunctionLocal) {
          const uint32_t k = o.symbol.index & ~ptx::Symbol::kFunctionLocal;
          const bool shared = p.function->locals[k].space == ptx::Space::shared;
          return p.local_variable_address[k] | (shared ? rank_field : 0);
        }
        const bool shared = p.module->variables[o.symbol.index].space == ptx::Space::shared;
        return p.variable_address[o.symbol.index] | (shared ? rank_field : 0);
      }
      fail(d, "function addresses are not supported");
    }
    case ptx::Operand::Kind::sink: return 0;
    default: fail(d, "unexpected operand form");
  }
}

void Warp::set(const ptx::Operand& o, int lane, uint64_t value, const Decoded& d) {
  if (o.kind == ptx::Operand::Kind::sink) return;
  if (o.kind != ptx::Operand::Kind::reg) fail(d, "destination is not a register");
  if (poisoned_count && poisoned[o.reg])
    fail(d, "writes register " + cta->launch->program->function->register_names[o.reg] +
                " while an asynchronous operation (wgmma, tcgen05.ld) still writes it: a missing wait", lane);
  reg(o.reg, lane) = value;
  written_at[o.reg] = instructions + 1;
}

uint64_t Warp::address(const ptx::Operand& o, int lane, const Decoded& d) {
  if (o.kind != ptx::Operand::Kind::address) fail(d, "expected an address operand");
  uint64_t base = 0;
  if (o.base_kind == ptx::Operand::Kind::reg) {
    ptx::Operand r;
    r.kind = ptx::Operand::Kind::reg;
    r.reg = o.reg;
    base = get(r, lane, d);
  } else if (o.base_kind == ptx::Operand::Kind::symbol) {
    ptx::Operand s;
    s.kind = ptx::Operand::Kind::symbol;
    s.symbol = o.symbol;
    base = get(s, lane, d);
  }
  return base + o.bits;
}

uint8_t* Warp::access(ptx::Space space, uint64_t address, uint32_t bytes, bool write, int lane, const Decoded& d) {
  Launch& l = *cta->launch;
  Window window = Window::global;
  switch (space) {
    case ptx::Space::shared: window = Window::shared; break;
    case ptx::Space::param: window = Window::param; break;
    case ptx::Space::local: window = Window::local; break;
    case ptx::Space::global: case ptx::Space::const_: window = Window::global; break;
    case ptx::Space::none:
      window = window_of(address);
      if (window == Window::shared) address -= kSharedWindow;
      else if (window == Window::param) address -= kParamWindow;
      else if (window == Window::local) address -= kLocalWindow;
      break;
  }
  if (address % bytes != 0 && bytes <= 16)
    fail(d, "misaligned " + std::to_string(bytes) + "-byte access at " + hex(address), lane);
  switch (window) {
    case Window::global: {
      if (!l.globals->find(address, bytes))
        fail(d, std::string(write ? "writes " : "reads ") + std::to_string(bytes) + " bytes at global address " +
                    hex(address) + ", outside every allocation", lane);
      return reinterpret_cast<uint8_t*>(address);
    }
    case Window::param: {
      if (write) fail(d, "writes kernel parameter space", lane);
      if (address + bytes > l.params.size())
        fail(d, "reads past the kernel parameters (offset " + std::to_string(address) + ")", lane);
      return l.params.data() + address;
    }
    case Window::local: {
      const uint64_t per_thread = l.program->function->local_bytes;
      if (address + bytes > per_thread) fail(d, "local access outside the thread's local memory", lane);
      return cta->local.data() + lane_thread(lane) * per_thread + address;
    }
    case Window::shared: break;
  }
  // A shared::cluster address (memory.h) may name a peer CTA's shared memory.
  Cta* owner = cta->cluster ? cta->cluster->owner(*cta, static_cast<uint32_t>(address)) : cta;
  if (!owner || address > 0xffffffffull)
    fail(d, std::string(write ? "writes " : "reads ") + "shared::cluster address " + hex(address) +
                ", which names no CTA of the cluster", lane);
  const bool peer = owner != cta;
  if (peer && owner->exited)
    fail(d, std::string(write ? "writes" : "reads") + " the shared memory of cluster CTA rank " +
                std::to_string(owner->rank) + ", which has exited", lane);
  address = shared_offset(static_cast<uint32_t>(address));
  SharedMemory& s = owner->smem;
  if (address < kSharedBase || address + bytes > s.limit)
    fail(d, std::string(write ? "writes " : "reads ") + "shared address " + hex(address) + " outside the CTA's " +
                std::to_string(s.limit - kSharedBase) + " bytes of shared memory", lane);
  for (uint32_t k = 0; k < bytes; ++k) {
    ShadowByte& sh = s.shadow[address + k];
    if (sh.mbarrier)
      fail(d, "generic " + std::string(write ? "write to" : "read of") + " the mbarrier object at shared " +
                  hex(address + k - (address + k) % 8), lane);
    if (sh.async_writes)
      fail(d, std::string(write ? "writes" : "reads") + " shared " + hex(address + k) +
                  " while an asynchronous copy (TMA) still writes it: a missing mbarrier wait", lane);
    if (write && sh.async_reads)
      fail(d, "writes shared " + hex(address + k) +
                  " while an asynchronous operation (TMA store or wgmma) still reads it: a missing wait", lane);
    if (write) sh.unfenced_writer = peer ? kPeerWriter : static_cast<uint8_t>(index + 1);
    if (write && peer) owner->peer_unfenced = true;
    // Atomics are the one way unsynchronized warps may share a byte. A peer CTA's access is
    // checked like any other: the clocks span the cluster's warps, and the cluster barrier, a
    // remote mbarrier arrival and a multicast copy's completion release and acquire across CTAs.
    if (d.atomic) continue;
    const std::string race = shared_access(*this, sh, write);
    if (!race.empty()) fail(d, race + " (shared " + hex(address + k) + ")", lane);
  }
  return s.bytes.data() + address;
}

void Warp::move(uint32_t lanes, uint32_t target) {
  if (!diverged) {
    if (lanes == live()) {
      common_pc = target;
      return;
    }
    pc.fill(common_pc);
    diverged = true;
  }
  for (int lane = 0; lane < 32; ++lane)
    if (lanes >> lane & 1) pc[lane] = target;
}

void Warp::reconverge() {
  const uint32_t lanes = live();
  if (!lanes) return;
  const uint32_t first = pc[__builtin_ctz(lanes)];
  for (int lane = 0; lane < 32; ++lane)
    if ((lanes >> lane & 1) && pc[lane] != first) return;
  diverged = false;
  common_pc = first;
}

void AllocationTable::add(const void* base, size_t bytes, std::string what) {
  std::lock_guard lock(mutex_);
  const uint64_t b = reinterpret_cast<uint64_t>(base);
  entries_[b] = Entry{b + bytes, std::move(what)};
}

bool AllocationTable::remove(const void* base) {
  std::lock_guard lock(mutex_);
  return entries_.erase(reinterpret_cast<uint64_t>(base)) > 0;
}

const std::string* AllocationTable::find(uint64_t address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.upper_bound(address);
  if (it == entries_.begin()) return nullptr;
  --it;
  if (address + bytes > it->second.end) return nullptr;
  return &it->second.what;
}

bool Cta::complete_one_async() {
  std::vector<size_t> live;
  for (size_t k = 0; k < async_ops.size(); ++k)
    if (!async_ops[k]->done) live.push_back(k);
  if (live.empty()) return false;
  AsyncOp& op = *async_ops[live[rng() % live.size()]];
  op.done = true;
  op.complete();
  std::erase_if(async_ops, [](const std::unique_ptr<AsyncOp>& o) { return o->done; });
  return true;
}

void Cta::complete_async_if(const std::function<bool(const AsyncOp&)>& pick) {
  for (size_t k = 0; k < async_ops.size(); ++k) {
    AsyncOp& op = *async_ops[k];
    if (!op.done && pick(op)) {
      op.done = true;
      op.complete();
    }
  }
  std::erase_if(async_ops, [](const std::unique_ptr<AsyncOp>& o) { return o->done; });
}

}  // namespace kgen::emu
