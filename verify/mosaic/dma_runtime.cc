#include "dma_runtime.h"

#include <algorithm>
#include <cstring>

namespace kgen::mosaic {

void DmaTrace::reset(std::vector<DmaRegion> regions) {
  regions_ = std::move(regions);
  counts_.assign(regions_.size(), DmaCounts{});
  pending_.clear();
  error_.clear();
  started_ = 0;
}

int64_t DmaTrace::region_of(const std::byte* at, std::size_t bytes) const {
  for (std::size_t k = 0; k < regions_.size(); ++k) {
    const DmaRegion& r = regions_[k];
    if (at >= r.begin && at + bytes <= r.begin + r.bytes) return static_cast<int64_t>(k);
  }
  return -1;
}

void DmaTrace::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

std::string DmaTrace::take_error() {
  std::string error = std::move(error_);
  error_.clear();
  return error;
}

void DmaTrace::start(std::byte* source, std::byte* target, std::size_t bytes, int32_t* semaphore) {
  const int64_t from = region_of(source, bytes), to = region_of(target, bytes);
  if (from < 0 || to < 0) {
    fail("tpu.enqueue_dma copies " + std::to_string(bytes) + " bytes " +
         (from < 0 ? "from outside every array the kernel was given" : "into memory outside every buffer"));
    return;
  }
  for (const Copy& copy : pending_)
    if (copy.target < target + bytes && target < copy.target + copy.bytes)
      fail("tpu.enqueue_dma into a buffer another copy still in flight writes: the two race on a TPU");
  ++started_;
  ++counts_[static_cast<std::size_t>(from)].copies;
  counts_[static_cast<std::size_t>(from)].bytes += static_cast<int64_t>(bytes);
  std::memset(target, 0xFF, bytes);
  *semaphore += static_cast<int32_t>(bytes);
  pending_.push_back({source, target, bytes, semaphore});
}

void DmaTrace::wait(std::byte* source, std::byte* target, std::size_t bytes, int32_t* semaphore) {
  auto match = std::find_if(pending_.begin(), pending_.end(), [&](const Copy& copy) {
    return copy.target == target && copy.bytes == bytes && copy.semaphore == semaphore;
  });
  if (match == pending_.end()) {
    fail("tpu.wait_dma2 for a copy of " + std::to_string(bytes) +
         " bytes that was never started on this semaphore and target: it would never return on a TPU");
    return;
  }
  if (match->source != source)
    fail("tpu.wait_dma2 names another source than the copy it waits for was started from");
  std::memcpy(match->target, match->source, bytes);
  *semaphore -= static_cast<int32_t>(bytes);
  pending_.erase(match);
}

DmaTrace& dma_trace() {
  thread_local DmaTrace trace;
  return trace;
}

extern "C" void kgen_mosaic_dma_start(int64_t source, int64_t target, int64_t bytes, int64_t semaphore) {
  dma_trace().start(reinterpret_cast<std::byte*>(source), reinterpret_cast<std::byte*>(target),
                    static_cast<std::size_t>(bytes), reinterpret_cast<int32_t*>(semaphore));
}

extern "C" void kgen_mosaic_dma_wait(int64_t source, int64_t target, int64_t bytes, int64_t semaphore) {
  dma_trace().wait(reinterpret_cast<std::byte*>(source), reinterpret_cast<std::byte*>(target),
                   static_cast<std::size_t>(bytes), reinterpret_cast<int32_t*>(semaphore));
}

}  // namespace kgen::mosaic
