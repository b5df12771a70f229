// The DMAs of a kernel that copies by hand (tpu.enqueue_dma, tpu.wait_dma2), carried out by
// the host while the kernel runs on the CPU. The lowering (lower_tpu_ops.cc) turns each into
// a call with raw addresses; this file gives them the TPU's meaning as late as it allows:
//   - a started copy's target holds nothing defined (it is poisoned, 0xFF bytes: NaN in every
//     float type) until a wait for that copy returns;
//   - the wait moves the bytes (from where the copy was started from) and uncounts them from
//     the semaphore; a wait for a copy never started on that semaphore and target would never
//     return on a TPU, and is an error;
//   - every copy must lie inside one array the driver knows (an input or output, a block or
//     a scratch buffer): a page index past the pool is an error, not a stray read;
//   - copies are counted per source array, which is how a verifier sees what a kernel read.
// Errors are recorded (a host call cannot throw through JIT-compiled frames); the caller
// checks them after each step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kgen::mosaic {

struct DmaRegion {
  const std::byte* begin = nullptr;
  std::size_t bytes = 0;
};

struct DmaCounts {
  int64_t copies = 0;
  int64_t bytes = 0;
};

// The DMA state of the current thread: the known arrays, the copies in flight, the counts.
class DmaTrace {
 public:
  // Forgets everything, then knows `regions` (counts are kept per region, in this order).
  void reset(std::vector<DmaRegion> regions);
  void start(std::byte* source, std::byte* target, std::size_t bytes, int32_t* semaphore);
  void wait(std::byte* source, std::byte* target, std::size_t bytes, int32_t* semaphore);

  const std::vector<DmaCounts>& counts() const { return counts_; }
  // The first misuse seen since the last take_error (empty: none), then forgotten.
  std::string take_error();
  int64_t in_flight() const { return static_cast<int64_t>(pending_.size()); }
  int64_t started() const { return started_; }  // copies started since the last reset

 private:
  struct Copy {
    std::byte* source;
    std::byte* target;
    std::size_t bytes;
    int32_t* semaphore;
  };
  // The index of the region holding [at, at + bytes), or -1.
  int64_t region_of(const std::byte* at, std::size_t bytes) const;
  void fail(std::string message);

  std::vector<DmaRegion> regions_;
  std::vector<DmaCounts> counts_;
  std::vector<Copy> pending_;
  std::string error_;
  int64_t started_ = 0;
};

DmaTrace& dma_trace();  // this thread's

// What the lowered kernels call (addresses and sizes as i64).
extern "C" void kgen_mosaic_dma_start(int64_t source, int64_t target, int64_t bytes, int64_t semaphore);
extern "C" void kgen_mosaic_dma_wait(int64_t source, int64_t target, int64_t bytes, int64_t semaphore);

}  // namespace kgen::mosaic
