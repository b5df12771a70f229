// The executing machine: a launch, its CTAs, their warps, and the decoded instructions the
// warps run. Warps execute their 32 lanes together: one decoded instruction, applied to the
// lanes of a mask, per step.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/memory.h"
#include "core/numbers.h"
#include "ptx/module.h"

namespace kgen::emu {

// PTX fundamental types, as instruction suffixes name them.
enum class Type : uint8_t {
  none, pred, b8, b16, b32, b64, b128, u8, u16, u32, u64, s8, s16, s32, s64, f16, f16x2, bf16, bf16x2, f32, f32x2,
  f64, tf32, e4m3, e5m2,
};
Type type_named(std::string_view suffix);  // Type::none when it is not a type
uint32_t type_bits(Type t);
inline bool is_signed(Type t) { return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64; }
inline bool is_float(Type t) {
  return t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2 || t == Type::f32 ||
         t == Type::f32x2 || t == Type::f64;
}

struct Warp;
struct Decoded;

// What an instruction did to the warp's control: advance the lanes it ran, or it moved their
// pcs itself, or the warp must wait (the instruction is retried later: it did nothing), or
// the warp should let others run after advancing (a failed try_wait).
enum class Step : uint8_t { next, jumped, blocked, yield };
using Handler = Step (*)(Warp&, const Decoded&, uint32_t mask);

// An instruction decoded once: its handler and the modifiers the handler needs.
struct Decoded {
  Handler run = nullptr;
  const ptx::Instruction* in = nullptr;
  Type type = Type::none;   // the instruction's (last) type suffix
  Type type2 = Type::none;  // cvt's source type; the second type where there are two
  Rounding rounding = Rounding::none;
  bool ftz = false, sat = false, approx = false;
  bool atomic = false;      // atom/red: exempt from the race check
  bool relaxed = false;     // .relaxed mbarrier operations: no release or acquire (core/races.h)
  ptx::Space space = ptx::Space::none;
  uint8_t vector = 1;       // .v2/.v4
  uint8_t mode = 0;         // family-specific (compare op, shfl mode, mul.hi/lo/wide, ...)
  uint8_t mode2 = 0;
  uint32_t imm = 0;         // family-specific constant (wgmma shape n, bulk rank, ...)
};

struct Cta;

// One async unit's outstanding work, completed by the scheduler at a time of its choosing.
struct AsyncOp {
  std::string what;              // for reports: the instruction and its PTX line
  std::function<void()> complete;
  int group_warp = -1;           // bulk groups: the issuing warp (-1: completes via mbarrier only)
  bool cp_async = false;         // a non-bulk cp.async: its groups are cp.async.commit_group's
  uint64_t group = 0;            // bulk group sequence of that warp
  bool done = false;
  // The mbarrier (an offset in signals_cta's shared memory) that its completion alone acts on
  // (a copy's bytes, a tcgen05.commit's arrival); nullptr: none, or more. While no warp waits
  // for that mbarrier, the scheduler leaves it in flight (core/cta_runner.cc).
  Cta* signals_cta = nullptr;
  uint32_t signals_mbarrier = 0;
};

// A vector clock over a cluster's agents: its warps, tensor cores and mbarriers (core/races.h).
using VectorClock = std::vector<uint32_t>;

struct MBarrier {
  uint32_t expected = 0;   // arrivals per phase
  int64_t pending = 0;     // arrivals still missing this phase
  int64_t tx = 0;          // transaction bytes still expected this phase
  uint64_t phase = 0;      // completed phases (the current phase's parity is phase & 1)
  uint32_t init_line = 0;
  bool fenced = false;     // a fence.mbarrier_init or fence.proxy.async followed its init
  // The cluster-barrier phase a relaxed arrival of its initializer, after that fence, released
  // the init in (0: none; core/exec_cluster.cc): warps past that phase may use it.
  uint64_t init_released_phase = 0;
  uint32_t init_agent = 0;  // who initialized it, at which of its clocks (core/races.h)
  uint32_t init_stamp = 0;
  uint32_t copies_in_flight = 0;  // issued copies that will complete_tx it
  // Its race-check agent (core/races.h, mbarrier_agent): the bytes its copies land are written
  // by it, at the phase they complete in; that phase's waiters take the phase count in.
  uint32_t agent = 0;
  VectorClock arrivals;     // what the arrivals of the current phase released
  VectorClock completed;    // what the last completed phase released, for its waiters
};

struct NamedBarrier {
  uint32_t expected = 0;  // threads
  uint32_t arrived = 0;
  uint64_t generation = 0;
  std::vector<uint32_t> warps;  // arrived warps (for reports)
  std::vector<uint32_t> waiters;  // the arrived warps that wait (bar.sync, not bar.arrive)
  VectorClock arrivals;  // what the arrivals of this phase released (core/races.h)
};

// Why a warp is not running.
struct Wait {
  enum class Kind : uint8_t { none, barrier, mbarrier, async_group, wgmma, cluster_barrier, tmem_alloc, tmem_pair } kind = Kind::none;
  uint32_t id = 0;          // barrier id, mbarrier address
  uint64_t generation = 0;  // barrier generation / mbarrier phase when it started waiting
  uint32_t pc = 0;
};

struct Cta;
struct Program;

struct Warp {
  Cta* cta = nullptr;
  uint32_t index = 0;     // in the CTA
  uint32_t valid = 0;     // lanes that exist
  uint32_t exited = 0;    // lanes that executed exit/ret
  bool diverged = false;
  uint32_t common_pc = 0;                // the pc when not diverged
  std::array<uint32_t, 32> pc{};         // per lane when diverged
  std::vector<uint64_t> regs;            // slot * 32 + lane
  std::vector<uint8_t> poisoned;         // per slot: async ops (wgmma) in flight on it
  uint32_t poisoned_count = 0;           // slots with poisoned != 0
  // The poisoned bit of a tcgen05.ld destination until tcgen05.wait::ld (core/exec_tcgen05.cc).
  // Reading it is allowed: the PTX ISA respects that true register dependency without a wait
  // ("Register dependencies, same thread", 9.7.16.6.4.5); writing it before the wait is not.
  static constexpr uint8_t kTcgen05LdPoison = 0x80;
  std::vector<uint64_t> written_at;      // per slot: `instructions` when last written by an instruction
  std::vector<uint64_t> read_at;         // per slot: `instructions` when last read by an instruction
  uint64_t wgmma_fence_at = 0;           // `instructions` at the last wgmma.fence (0: none)
  Wait wait;
  uint64_t instructions = 0;
  uint64_t thread_instructions = 0;
  uint32_t agent = 0;      // rank * 32 + index: its entry in vector clocks (core/races.h)
  VectorClock vc;          // what this warp has synchronized with
  // Bulk async-groups (cp.async.bulk): ops issued since the last commit, and committed groups.
  uint64_t bulk_open_group = 0;
  uint64_t cp_async_open_group = 0;  // non-bulk cp.async groups (core/exec_cp_async.cc)
  uint64_t bulk_committed = 0;
  // wgmma bookkeeping (core/wgmma_unit.cc).
  uint64_t wgmma_issued = 0;
  std::deque<uint64_t> wgmma_groups;  // wgmma_issued at each commit_group, oldest first
  // barrier.cluster (core/exec_cluster.cc): lanes that arrived in the cluster barrier's current
  // phase, and lanes that arrived and have not waited yet (with the phase they wait for).
  uint32_t cluster_arrived = 0;
  uint32_t cluster_unwaited = 0;
  uint64_t cluster_wait_generation = 0;
  uint64_t cluster_acquired = 0;   // the last cluster-barrier phase it waited for and saw complete
  bool release_fenced = false;     // a fence.{sc,acq_rel,release} since its last cluster arrival

  uint32_t live() const { return valid & ~exited; }
  uint32_t lane_thread(int lane) const { return index * 32 + static_cast<uint32_t>(lane); }

  uint64_t& reg(uint32_t slot, int lane) { return regs[size_t{slot} * 32 + static_cast<size_t>(lane)]; }
  // Reads/writes an operand's value for a lane, checking poisoned registers.
  uint64_t get(const ptx::Operand& o, int lane, const Decoded& d);
  void set(const ptx::Operand& o, int lane, uint64_t value, const Decoded& d);
  // The generic or state-space address an address operand names.
  uint64_t address(const ptx::Operand& o, int lane, const Decoded& d);
  // A pointer to `bytes` bytes at `address` in `space` (generic: decoded by window), after the
  // bounds and shadow checks of a generic-proxy read or write.
  uint8_t* access(ptx::Space space, uint64_t address, uint32_t bytes, bool write, int lane, const Decoded& d);

  // Moves `lanes` to `pc` (a branch), diverging the warp when they are not all its live lanes.
  void move(uint32_t lanes, uint32_t pc);
  void reconverge();

  [[noreturn]] void fail(const Decoded& d, const std::string& message, int lane = -1) const;
  std::string where(const Decoded& d, int lane = -1) const;
};

struct Launch;
struct Cluster;

struct Cta {
  Launch* launch = nullptr;
  Cluster* cluster = nullptr;
  Dim3 id;
  uint32_t linear_id = 0;
  uint32_t rank = 0;         // %cluster_ctarank
  bool exited = false;       // every warp exited: its shared memory is gone
  bool peer_unfenced = false;  // a peer CTA wrote its shared memory (ShadowByte::kPeerWriter)
  bool clc_failed = false;     // a clusterlaunchcontrol.try_cancel of this CTA failed
  std::vector<Warp> warps;
  SharedMemory smem;
  std::vector<uint8_t> local;  // threads x local bytes
  std::array<NamedBarrier, 16> barriers{};
  std::map<uint32_t, MBarrier> mbarriers;  // by shared address
  std::vector<std::unique_ptr<AsyncOp>> async_ops;  // in flight
  std::mt19937_64 rng;
  // wgmma per warpgroup (core/wgmma_unit.cc).
  struct WarpgroupState;
  std::vector<std::shared_ptr<WarpgroupState>> warpgroups;
  // tcgen05 tensor memory, its allocator and the tensor-core pipe (core/tensor_memory.h).
  struct TensorMemoryState;
  std::shared_ptr<TensorMemoryState> tmem;

  void add_async(std::unique_ptr<AsyncOp> op) { async_ops.push_back(std::move(op)); }
  // Completes one async op chosen by the seed; false when none is in flight.
  bool complete_one_async();
  // Completes every op for which `pick` is true (in issue order).
  void complete_async_if(const std::function<bool(const AsyncOp&)>& pick);
};

// The CTAs of one thread-block cluster, run together (core/cta_runner.cc). The cluster barrier
// (barrier.cluster.arrive/wait) completes a phase when every non-exited thread of every CTA
// arrived.
struct Cluster {
  Dim3 id;                 // %clusterid
  std::vector<Cta*> ctas;  // by rank
  uint64_t barrier_generation = 0;  // completed cluster-barrier phases
  VectorClock barrier_arrivals;     // what this phase's arrivals released (core/races.h)
  VectorClock barrier_completed;    // what the last completed phase released
  uint32_t mbarrier_inits = 0;      // mbarriers initialized so far: their agents (core/races.h)
  // The CTA whose shared memory `address` (a shared::cta or shared::cluster address, memory.h)
  // names (by its rank field); nullptr when the rank is not in the cluster.
  Cta* owner(Cta& executing, uint32_t address) const;
  // Completes the cluster barrier's phase when every live thread arrived; true when it did.
  bool try_complete_barrier();
};

// A loaded kernel ready to run: its function, decoded body and symbol addresses.
struct Program {
  const ptx::Module* module = nullptr;
  const ptx::Function* function = nullptr;
  std::vector<Decoded> code;
  std::vector<uint64_t> variable_address;     // module variables: global address or shared address
  std::vector<uint64_t> local_variable_address;  // function-body .shared and .local variables
  std::vector<uint32_t> param_offset;
  uint32_t param_bytes = 0;
  uint32_t static_shared = 0;   // bytes after kSharedBase used by .shared variables
  uint32_t dynamic_shared_address = 0;  // where the .extern .shared array starts
};

struct Launch {
  const Program* program = nullptr;
  const KernelInfo* info = nullptr;
  Dim3 grid, block;
  Dim3 cluster;                  // CTAs per cluster in each dimension
  bool explicit_cluster = false;  // %is_explicit_cluster
  uint32_t dynamic_shared = 0;
  std::vector<uint8_t> params;
  AllocationTable* globals = nullptr;
  uint64_t seed = 1;
  uint32_t sm_count = 132;
  uint64_t max_instructions = ~0ull;  // warp instructions the launch may execute
  uint64_t executed = 0;              // warp instructions so far
  // The clusters not started yet, in launch order: device.cc runs them from the front, and a
  // clusterlaunchcontrol.try_cancel takes the front one away (core/exec_cluster_launch.cc).
  std::deque<Dim3> unlaunched;
};

// Runs one cluster of a launch (its CTAs interleaved under one seeded scheduler) to completion;
// throws EmulationError on a finding or a deadlock. `cluster_id`: %clusterid.
void run_cluster(Launch& launch, Dim3 cluster_id, LaunchStats& stats);

// Builds a Program for one kernel of a module (decoding every instruction; an instruction the
// emulator does not implement is an error naming the opcode and line).
// `variable_address`: each module variable's address (global: host pointer; shared: shared
// address); the module's static shared variables end at `module_shared_end`; the .extern
// shared array asks for `extern_align`.
std::unique_ptr<Program> make_program(const ptx::Module& module, const ptx::Function& function,
                                      const std::vector<uint64_t>& variable_address, uint32_t module_shared_end,
                                      uint32_t extern_align);

}  // namespace kgen::emu
