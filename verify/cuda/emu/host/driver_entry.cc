// The driver API functions programs reach (CUTLASS looks up cuTensorMapEncodeTiled with
// cudaGetDriverEntryPointByVersion; cutlass/workspace.h calls cuMemsetD*Async directly) and the
// entry-point lookups themselves. Only the functions defined in this library are found; any
// other name is answered "symbol not found" with a line on stderr naming it.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "../core/device.h"
#include "runtime_state.h"

namespace kgen::emu {
namespace {

constexpr int kDriverVersion = 13000;

template <class T>
CUresult fill_elements(const char* api, CUdeviceptr destination, T value, size_t count) {
  if (sticky_error() != cudaSuccess) return CUDA_ERROR_LAUNCH_FAILED;
  if (count == 0) return CUDA_SUCCESS;
  void* pointer = reinterpret_cast<void*>(destination);
  if (destination % sizeof(T) != 0 || !Device::get().contains(pointer, count * sizeof(T))) {
    std::fprintf(stderr, "ptxemu: %s: [%p, +%zu) is not an aligned range inside one device allocation\n", api, pointer,
                 count * sizeof(T));
    return CUDA_ERROR_INVALID_VALUE;
  }
  T* elements = static_cast<T*>(pointer);
  for (size_t i = 0; i < count; ++i) elements[i] = value;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr destination, unsigned char value, size_t count, CUstream) {
  return fill_elements("cuMemsetD8Async", destination, value, count);
}

CUresult cuMemsetD16Async(CUdeviceptr destination, unsigned short value, size_t count, CUstream) {
  return fill_elements("cuMemsetD16Async", destination, value, count);
}

CUresult cuMemsetD32Async(CUdeviceptr destination, unsigned int value, size_t count, CUstream) {
  return fill_elements("cuMemsetD32Async", destination, value, count);
}

}  // extern "C"

namespace kgen::emu {
namespace {

struct DriverEntry {
  const char* name;
  void* function;
  int introduced;  // the CUDA version the symbol's current ABI dates from
};

const DriverEntry kDriverEntries[] = {
    {"cuInit", reinterpret_cast<void*>(&cuInit), 2000},
    {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion), 2020},
    {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString), 6000},
    {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName), 6000},
    {"cuMemsetD8Async", reinterpret_cast<void*>(&cuMemsetD8Async), 3020},
    {"cuMemsetD16Async", reinterpret_cast<void*>(&cuMemsetD16Async), 3020},
    {"cuMemsetD32Async", reinterpret_cast<void*>(&cuMemsetD32Async), 3020},
    {"cuTensorMapEncodeTiled", reinterpret_cast<void*>(&cuTensorMapEncodeTiled), 12000},
    {"cuTensorMapEncodeIm2col", reinterpret_cast<void*>(&cuTensorMapEncodeIm2col), 12000},
    {"cuTensorMapEncodeIm2colWide", reinterpret_cast<void*>(&cuTensorMapEncodeIm2colWide), 12080},
    {"cuTensorMapReplaceAddress", reinterpret_cast<void*>(&cuTensorMapReplaceAddress), 12000},
};

// The lookup both APIs share: the function for `symbol` as of `version`.
cudaDriverEntryPointQueryResult find_entry(const char* api, const char* symbol, int version, void** function) {
  *function = nullptr;
  for (const DriverEntry& entry : kDriverEntries) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    if (version < entry.introduced) return cudaDriverEntryPointVersionNotSufficent;
    *function = entry.function;
    return cudaDriverEntryPointSuccess;
  }
  std::fprintf(stderr, "ptxemu: %s: driver function %s is not emulated\n", api, symbol);
  return cudaDriverEntryPointSymbolNotFound;
}

cudaError_t entry_point(const char* api, const char* symbol, void** function, int version,
                        cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return note_error(cudaErrorInvalidValue);
  if (version > kDriverVersion) {
    *function = nullptr;
    return refuse(api, cudaErrorInvalidValue,
                  "CUDA version " + std::to_string(version) + " is newer than the emulated driver's 13000");
  }
  cudaDriverEntryPointQueryResult result = find_entry(api, symbol, version, function);
  if (status) *status = result;
  return cudaSuccess;
}

}  // namespace
}  // namespace kgen::emu

extern "C" {

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long,
                                    cudaDriverEntryPointQueryResult* status) {
  return entry_point("cudaGetDriverEntryPoint", symbol, function, kDriverVersion, status);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int version,
                                             unsigned long long, cudaDriverEntryPointQueryResult* status) {
  return entry_point("cudaGetDriverEntryPointByVersion", symbol, function, static_cast<int>(version), status);
}

CUresult cuGetProcAddress(const char* symbol, void** function, int version, cuuint64_t,
                          CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cudaDriverEntryPointQueryResult result = find_entry("cuGetProcAddress", symbol, version, function);
  if (status) {
    *status = result == cudaDriverEntryPointSuccess       ? CU_GET_PROC_ADDRESS_SUCCESS
              : result == cudaDriverEntryPointSymbolNotFound ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                                             : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
  }
  return result == cudaDriverEntryPointSymbolNotFound ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

}  // extern "C"
