// Memory as kernels see it: generic addresses and the windows that map them to state spaces,
// global memory checked against the allocation table, and a CTA's shared memory with the
// shadow state that makes asynchronous hazards visible.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kgen::emu {

// Generic addresses of the non-global windows. Host (= global) pointers on x86-64 Linux lie
// below 2^47, so these cannot collide with an allocation.
inline constexpr uint64_t kSharedWindow = 0x0001000000000000ull;
inline constexpr uint64_t kParamWindow = 0x0002000000000000ull;
inline constexpr uint64_t kLocalWindow = 0x0003000000000000ull;
inline constexpr uint64_t kWindowSize = 0x0000010000000000ull;
// Shared addresses a CTA may use start here: sm_90 and sm_100 reserve the first KiB of every
// CTA's shared memory for the system (cudaDevAttrReservedSharedMemoryPerBlock).
inline constexpr uint32_t kSharedBase = 1024;

// Shared addresses, shared::cta and shared::cluster alike: bits 24 and up hold the CTA's
// %cluster_ctarank, bits 0..23 the offset in that CTA's shared memory (at most 228 KiB, so 24
// bits suffice). The shared::cta window of a CTA lies inside the shared::cluster window at its
// own place (PTX ISA, "Shared memory state space"), so a CTA's own shared addresses (its
// variables' addresses, cvta.to.shared) carry its rank, and mapa replaces the rank field.
// CUTLASS relies on that layout: its 2-SM copies clear bit 24 of a shared::cta address to name
// the even CTA of the pair (cute::Sm100MmaPeerBitMask). A CTA of no cluster has rank 0. Generic
// addresses of shared memory are kSharedWindow plus such an address.
inline constexpr uint32_t kClusterRankShift = 24;
inline constexpr uint32_t kSharedOffsetMask = (1u << kClusterRankShift) - 1;
inline uint32_t shared_offset(uint32_t address) { return address & kSharedOffsetMask; }
// The %cluster_ctarank of the CTA whose shared memory a shared address names.
inline int shared_rank(uint32_t address) { return static_cast<int>(address >> kClusterRankShift); }
inline uint32_t cluster_shared_address(uint32_t rank, uint32_t offset) {
  return rank << kClusterRankShift | shared_offset(offset);
}

enum class Window : uint8_t { global, shared, param, local };
inline Window window_of(uint64_t generic) {
  if (generic >= kSharedWindow && generic < kSharedWindow + kWindowSize) return Window::shared;
  if (generic >= kParamWindow && generic < kParamWindow + kWindowSize) return Window::param;
  if (generic >= kLocalWindow && generic < kLocalWindow + kWindowSize) return Window::local;
  return Window::global;
}

// The allocations kernels may touch: cudaMalloc'd buffers and module variables.
class AllocationTable {
 public:
  void add(const void* base, size_t bytes, std::string what);
  bool remove(const void* base);
  // The allocation holding [address, address + bytes), or nullptr.
  const std::string* find(uint64_t address, uint64_t bytes) const;

 private:
  struct Entry {
    uint64_t end;
    std::string what;
  };
  mutable std::mutex mutex_;
  std::map<uint64_t, Entry> entries_;  // base -> entry
};

// Shadow state of one byte of shared memory.
struct ShadowByte {
  uint8_t async_writes = 0;     // TMA loads in flight writing it: its value is poison
  uint8_t async_reads = 0;      // TMA stores and tensor-core ops in flight reading it
  uint8_t unfenced_writer = 0;  // warp + 1 whose generic write no fence.proxy.async ordered yet
                                // (kPeerWriter: a warp of another CTA of the cluster)
  uint8_t mbarrier = 0;         // part of an initialized mbarrier object
  // The last write and read: the agent (a cluster warp for generic accesses and wgmma
  // operands, a CTA's tensor core for tcgen05.mma operands, an mbarrier for the bytes its copy
  // landed) + 1, 0 for none, and that agent's own clock then (core/races.h); whether the read
  // was a wgmma operand's.
  uint8_t read_by_wgmma = 0;
  uint16_t writer = 0;
  uint16_t reader = 0;
  uint32_t write_stamp = 0;
  uint32_t read_stamp = 0;
};

inline constexpr uint8_t kPeerWriter = 0xff;
// Who ShadowByte::unfenced_writer names, for reports.
inline std::string unfenced_writer_name(uint8_t writer) {
  return writer == kPeerWriter ? "a warp of another CTA of the cluster" : "warp " + std::to_string(writer - 1);
}

struct SharedMemory {
  std::vector<uint8_t> bytes;   // index = shared address
  std::vector<ShadowByte> shadow;
  uint32_t limit = 0;           // one past the last usable shared address
};

}  // namespace kgen::emu
