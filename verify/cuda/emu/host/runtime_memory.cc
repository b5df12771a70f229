// Memory: cudaMalloc and cudaFree on the Device's checked allocations, page-locked host memory
// as plain host memory, copies and fills. Device addresses are host addresses, so a copy is a
// memcpy once both ranges are checked: a device-side range must lie inside one live
// allocation, which is what catches a host pointer passed where a device pointer belongs.
// Asynchronous variants run at once (streams are synchronous here).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "../core/device.h"
#include "gpu_model.h"
#include "runtime_state.h"

namespace kgen::emu {
namespace {

struct MemoryBook {
  std::mutex mutex;
  std::map<const void*, size_t> device;  // live cudaMalloc allocations and their sizes
  std::map<const void*, size_t> host;    // live cudaMallocHost / cudaHostAlloc allocations
  size_t device_bytes = 0;
};

MemoryBook& book() {
  static MemoryBook* memory = new MemoryBook;  // never destroyed: frees may come from static destructors
  return *memory;
}

std::string hex(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

bool device_range(const void* pointer, size_t bytes) {
  return pointer != nullptr && Device::get().contains(pointer, bytes);
}

// Checks a copy's two ranges for `kind`; cudaMemcpyDefault infers each side from the pointer.
cudaError_t check_copy(const char* api, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return note_error(cudaErrorInvalidMemcpyDirection);
  if (dst == nullptr || src == nullptr)
    return refuse(api, cudaErrorInvalidValue, std::string(dst == nullptr ? "destination" : "source") + " is null");
  bool dst_on_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
                       (kind == cudaMemcpyDefault && Device::get().contains(dst, 1));
  bool src_on_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
                       (kind == cudaMemcpyDefault && Device::get().contains(src, 1));
  if (dst_on_device && !device_range(dst, bytes))
    return refuse(api, cudaErrorInvalidValue,
                  "destination [" + hex(dst) + ", +" + std::to_string(bytes) + ") is not inside one device allocation");
  if (src_on_device && !device_range(src, bytes))
    return refuse(api, cudaErrorInvalidValue,
                  "source [" + hex(src) + ", +" + std::to_string(bytes) + ") is not inside one device allocation");
  return cudaSuccess;
}

cudaError_t copy(const char* api, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  if (bytes == 0) return cudaSuccess;
  if (cudaError_t error = check_copy(api, dst, src, bytes, kind)) return error;
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t fill(const char* api, void* pointer, int value, size_t bytes) {
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  if (bytes == 0) return cudaSuccess;
  if (!device_range(pointer, bytes))
    return refuse(api, cudaErrorInvalidValue,
                  "[" + hex(pointer) + ", +" + std::to_string(bytes) + ") is not inside one device allocation");
  std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t allocate_device(void** pointer, size_t bytes) {
  if (pointer == nullptr) return note_error(cudaErrorInvalidValue);
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  *pointer = nullptr;
  if (bytes == 0) return cudaSuccess;
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  if (bytes > current_gpu().global_memory_bytes - memory.device_bytes) return note_error(cudaErrorMemoryAllocation);
  try {
    *pointer = Device::get().allocate(bytes);
  } catch (const std::exception& error) {
    return refuse("cudaMalloc", cudaErrorMemoryAllocation, error.what());
  }
  if (*pointer == nullptr) return note_error(cudaErrorMemoryAllocation);
  memory.device[*pointer] = bytes;
  memory.device_bytes += bytes;
  return cudaSuccess;
}

cudaError_t free_device(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  auto found = memory.device.find(pointer);
  if (found == memory.device.end())
    return refuse("cudaFree", cudaErrorInvalidValue, hex(pointer) + " is not the start of a live cudaMalloc allocation");
  try {
    Device::get().release(pointer);
  } catch (const std::exception& error) {
    return refuse("cudaFree", cudaErrorInvalidValue, error.what());
  }
  memory.device_bytes -= found->second;
  memory.device.erase(found);
  return cudaSuccess;
}

cudaError_t allocate_host(void** pointer, size_t bytes) {
  if (pointer == nullptr) return note_error(cudaErrorInvalidValue);
  *pointer = nullptr;
  if (bytes == 0) return cudaSuccess;
  void* memory_block = nullptr;
  // Page-locked memory is page aligned on CUDA; programs may rely on generous alignment.
  if (posix_memalign(&memory_block, 4096, bytes) != 0) return note_error(cudaErrorMemoryAllocation);
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  memory.host[memory_block] = bytes;
  *pointer = memory_block;
  return cudaSuccess;
}

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

cudaError_t cudaMalloc(void** pointer, size_t bytes) { return allocate_device(pointer, bytes); }

cudaError_t cudaFree(void* pointer) {
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  return free_device(pointer);
}

cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t) { return allocate_device(pointer, bytes); }

cudaError_t cudaFreeAsync(void* pointer, cudaStream_t) { return cudaFree(pointer); }

cudaError_t cudaMallocManaged(void**, size_t, unsigned int) {
  return refuse("cudaMallocManaged", cudaErrorNotSupported, "managed memory is not emulated; use cudaMalloc");
}

cudaError_t cudaMallocHost(void** pointer, size_t bytes) { return allocate_host(pointer, bytes); }

cudaError_t cudaHostAlloc(void** pointer, size_t bytes, unsigned int flags) {
  if (flags & cudaHostAllocMapped)
    return refuse("cudaHostAlloc", cudaErrorNotSupported,
                  "cudaHostAllocMapped (host memory kernels read) is not emulated; use cudaMalloc");
  return allocate_host(pointer, bytes);
}

cudaError_t cudaFreeHost(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  auto found = memory.host.find(pointer);
  if (found == memory.host.end())
    return refuse("cudaFreeHost", cudaErrorInvalidValue, hex(pointer) + " was not allocated by cudaMallocHost");
  memory.host.erase(found);
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return copy("cudaMemcpy", dst, src, bytes, kind);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return copy("cudaMemcpyAsync", dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* pointer, int value, size_t bytes) { return fill("cudaMemset", pointer, value, bytes); }

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t) {
  return fill("cudaMemsetAsync", pointer, value, bytes);
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return note_error(cudaErrorInvalidValue);
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  *total_bytes = current_gpu().global_memory_bytes;
  *free_bytes = *total_bytes - memory.device_bytes;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* pointer) {
  if (attributes == nullptr) return note_error(cudaErrorInvalidValue);
  std::memset(attributes, 0, sizeof *attributes);
  attributes->type = cudaMemoryTypeUnregistered;
  attributes->device = 0;
  if (pointer != nullptr && Device::get().contains(pointer, 1)) {
    attributes->type = cudaMemoryTypeDevice;
    attributes->devicePointer = const_cast<void*>(pointer);
    return cudaSuccess;
  }
  MemoryBook& memory = book();
  std::lock_guard lock(memory.mutex);
  auto after = memory.host.upper_bound(pointer);
  if (after != memory.host.begin()) {
    auto block = std::prev(after);
    const char* start = static_cast<const char*>(block->first);
    if (static_cast<const char*>(pointer) < start + block->second) {
      attributes->type = cudaMemoryTypeHost;
      attributes->hostPointer = const_cast<void*>(pointer);
    }
  }
  return cudaSuccess;
}

// Device variables live in the Device's copy of each module, which the Device interface does
// not expose: refused by name rather than copied to the wrong place.
cudaError_t cudaMemcpyToSymbol(const void*, const void*, size_t, size_t, cudaMemcpyKind) {
  return refuse("cudaMemcpyToSymbol", cudaErrorNotSupported, "__device__/__constant__ variables are not emulated");
}

cudaError_t cudaMemcpyFromSymbol(void*, const void*, size_t, size_t, cudaMemcpyKind) {
  return refuse("cudaMemcpyFromSymbol", cudaErrorNotSupported, "__device__/__constant__ variables are not emulated");
}

cudaError_t cudaGetSymbolAddress(void**, const void*) {
  return refuse("cudaGetSymbolAddress", cudaErrorNotSupported, "__device__/__constant__ variables are not emulated");
}

cudaError_t cudaGetSymbolSize(size_t*, const void*) {
  return refuse("cudaGetSymbolSize", cudaErrorNotSupported, "__device__/__constant__ variables are not emulated");
}

}  // extern "C"
