// A CTA's tensor memory (sm_100a): 128 lanes x 512 columns of 32-bit cells with shadow state,
// the column allocator of tcgen05.alloc/dealloc, and the CTA's tensor-core pipe, which runs
// tcgen05.mma and tcgen05.commit in issue order (exec_tcgen05.cc issues into it).
//
// The shadow state of a cell makes the hazards of the tcgen05 memory model visible:
//   * an MMA in flight writing it as D, or reading it as A (TS);
//   * the last MMA that wrote it, unpublished until the mbarrier phase of a tcgen05.commit
//     issued after it (by the issuing thread) has completed;
//   * a tcgen05.st not yet waited for with tcgen05.wait::st, a tcgen05.ld not yet waited for
//     with tcgen05.wait::ld (its read of the cell may still be under way);
//   * the last write and the last read (warp, tensor-memory clock, PTX line), so that a
//     hand-off between warps is checked for the fence pair the PTX ISA asks for: the earlier
//     side's tcgen05.fence::before_thread_sync after its access, the later side's
//     tcgen05.fence::after_thread_sync after that access (hence after the synchronization
//     between them). An MMA's D write is fenced on the issuing side by its commit.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/machine.h"

namespace kgen::emu {

inline constexpr uint32_t kTmemLanes = 128;
inline constexpr uint32_t kTmemColumns = 512;

// The last access of one kind (write or read) to a cell.
struct TmemAccess {
  int warp = -1;       // -1: none since the allocation
  uint64_t time = 0;   // the tensor-memory clock at the access
  uint32_t line = 0;   // its PTX line
  uint64_t mma = 0;    // a write by an MMA: its seq + 1 (its commit is the issuing side's fence)
  // The accessing (issuing) warp's vector-clock agent and its own clock then (core/races.h): a
  // later access by a warp whose clock covers it is ordered after it by release/acquire.
  uint32_t agent = 0, stamp = 0;
};

struct TmemShadowCell {
  uint32_t value = 0xffffffffu;  // NaN until something writes it: reads of garbage show up
  uint16_t mma_writes = 0;       // MMAs in flight writing it (D)
  uint16_t mma_reads = 0;        // MMAs in flight reading it (A of the TS form)
  int st_pending = -1;           // warp whose tcgen05.st awaits its tcgen05.wait::st
  int ld_pending = -1;           // warp whose tcgen05.ld of it awaits its tcgen05.wait::ld
  TmemAccess write, read;
};

// An mbarrier phase a tcgen05.commit arrived in: the MMAs it tracked are visible to a thread
// once that phase has completed.
struct TmemPublication {
  uint32_t mbarrier = 0;
  uint64_t phase = 0;  // complete when the mbarrier's completed-phase count reaches this
  uint64_t time = 0;   // the clock at the arrival
};

// TmemMmaRecord::warp and TmemAccess::warp of a cta_group::2 MMA in the tensor memory of the
// CTA that did not issue it: kPeerIssuer + the issuing warp's index in the peer CTA.
inline constexpr int kPeerIssuer = 1000;

struct TmemMmaRecord {
  int warp = -1;
  uint32_t line = 0;
  bool complete = false;
  std::vector<TmemPublication> publications;
};

struct Cta::TensorMemoryState {
  struct Allocation {
    uint32_t columns = 0;
    uint32_t line = 0;
    int warp = -1;
  };
  struct WarpState {
    uint64_t before_fence = 0;          // clock at its last tcgen05.fence::before_thread_sync
    uint64_t after_fence = 0;           // clock at its last tcgen05.fence::after_thread_sync
    std::vector<uint32_t> st_cells;     // cells of its tcgen05.st awaiting wait::st
    std::vector<uint32_t> ld_cells;     // cells of its tcgen05.ld awaiting wait::ld
  };
  // One operation of the tensor-core pipe (an MMA or a commit) and its async-op handle.
  struct PipeEntry {
    AsyncOp* op = nullptr;
    std::function<void()> run;
  };

  std::vector<TmemShadowCell> cells = std::vector<TmemShadowCell>(size_t{kTmemLanes} * kTmemColumns);
  std::map<uint32_t, Allocation> allocations;  // by first column
  bool permit = true;                          // the CTA may still allocate
  uint64_t clock = 0;                          // ticks at every tcgen05 access and fence
  std::vector<WarpState> warps;
  std::vector<TmemMmaRecord> mmas;             // by seq
  std::map<uint32_t, std::vector<uint64_t>> unpublished;  // thread -> seqs no completed commit phase covers
  std::deque<PipeEntry> pipe;
  // The tensor core's vector clock (core/races.h, tensor_core_agent): what the issuers of the
  // MMAs and commits it ran had done; a commit's arrival releases it.
  VectorClock vc;
  // CTA pairs (.cta_group::2, exec_tcgen05.cc).
  Cta* owner = nullptr;                        // the CTA whose tensor memory this is
  int cta_group = 0;                           // of its tcgen05 instructions (0: none yet)
  // The MMAs this CTA's threads issued into the peer CTA's tensor memory (records there), by
  // thread, that no completed commit phase in the peer covers yet.
  std::map<uint32_t, std::vector<std::pair<Cta*, uint64_t>>> peer_unpublished;
  // The tcgen05.fence timeline of the peer CTA's warps, on this CTA's clock: what a hand-off to
  // an MMA the peer issues into this tensor memory is checked against.
  std::map<uint32_t, WarpState> peer_warps;
  // A tcgen05.alloc.cta_group::2 of one of this CTA's warps that waits for the peer's warp.
  struct PairAllocation {
    bool waiting = false, done = false;
    uint32_t columns = 0, taddr = 0, line = 0;
    int warp = -1;
  } pair_alloc;

  TmemShadowCell& cell(uint32_t lane, uint32_t column) { return cells[size_t{lane} * kTmemColumns + column]; }
  WarpState& warp(const Warp& w) {
    if (warps.size() < w.cta->warps.size()) warps.resize(w.cta->warps.size());
    return warps[w.index];
  }
  uint32_t allocated_columns() const;
  // "" when columns [first, first + count) lie inside one allocation; otherwise why not.
  std::string check_allocated(uint32_t first, uint32_t count) const;
  // The earliest completed publication of an MMA's writes, or nullptr (not visible yet).
  const TmemPublication* published(const Cta& cta, uint64_t seq) const;
  // Runs the pipe's operations up to and including the one of `op`, in issue order.
  void drain_through(const AsyncOp* op);
};

// Whether tcgen05.alloc of `columns` columns would succeed now (a free run at a multiple of
// its size: first fit, as the hardware's placement is not documented).
bool tensor_memory_fits(const Cta& cta, uint32_t columns);
uint32_t tensor_memory_first_fit(const Cta::TensorMemoryState& t, uint32_t columns);  // 512: none

// Whether a tcgen05.alloc.cta_group::2 of the CTA may go on: the peer's warp completed it, or
// the peer's warp waits for this CTA's and the columns are free in both (exec_tcgen05.cc).
bool tensor_memory_pair_ready(const Cta& cta);

// The CTA's tensor memory, created on first use.
Cta::TensorMemoryState& tensor_memory(Cta& cta);

// A finding when the CTA's warps have all exited while it still holds tensor memory.
void check_tensor_memory_at_exit(const Cta& cta);

}  // namespace kgen::emu
