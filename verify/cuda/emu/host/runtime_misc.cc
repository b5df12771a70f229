// Device-wide settings that change nothing in an emulation but that programs set: limits, cache
// preferences, and cudaDeviceReset.
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

#include "registry.h"
#include "runtime_state.h"

namespace kgen::emu {
namespace {

struct Limits {
  std::mutex mutex;
  // The defaults of a Hopper/Blackwell context.
  std::map<cudaLimit, size_t> values = {
      {cudaLimitStackSize, 1024},           {cudaLimitPrintfFifoSize, 1 << 20},
      {cudaLimitMallocHeapSize, 8 << 20},   {cudaLimitDevRuntimeSyncDepth, 2},
      {cudaLimitDevRuntimePendingLaunchCount, 2048}, {cudaLimitMaxL2FetchGranularity, 32},
      {cudaLimitPersistingL2CacheSize, 0},
  };
};

Limits& limits() {
  static Limits* settings = new Limits;
  return *settings;
}

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  Limits& settings = limits();
  std::lock_guard lock(settings.mutex);
  auto found = settings.values.find(limit);
  if (found == settings.values.end()) return note_error(cudaErrorUnsupportedLimit);
  found->second = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  if (value == nullptr) return note_error(cudaErrorInvalidValue);
  Limits& settings = limits();
  std::lock_guard lock(settings.mutex);
  auto found = settings.values.find(limit);
  if (found == settings.values.end()) return note_error(cudaErrorUnsupportedLimit);
  *value = found->second;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache) {
  return Registry::get().find_kernel(func) ? cudaSuccess : note_error(cudaErrorInvalidDeviceFunction);
}

// A real reset destroys the context (and with it a sticky error and every allocation). The
// emulator keeps its memory and cannot undo a finding, so a reset after one still fails;
// otherwise there is nothing to reset.
cudaError_t cudaDeviceReset(void) { return note_error(sticky_error()); }

}  // extern "C"
