// cudaGetLastError and friends, and the names and descriptions of runtime and driver errors.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <utility>

#include "runtime_state.h"

namespace kgen::emu {
namespace {

struct RuntimeErrorName {
  cudaError_t error;
  const char* name;
};

constexpr RuntimeErrorName kRuntimeErrorNames[] = {
#define KGEN_CUDA_ERROR(name) {name, #name},
#include "cuda_error_names.inc"
#undef KGEN_CUDA_ERROR
};

struct DriverResultName {
  CUresult result;
  const char* name;
};

constexpr DriverResultName kDriverResultNames[] = {
#define KGEN_CU_RESULT(name) {name, #name},
#include "cu_result_names.inc"
#undef KGEN_CU_RESULT
};

// The descriptions programs print most; they read as the real runtime's so that logs compare.
// Errors without one are described by their name.
constexpr std::pair<cudaError_t, const char*> kRuntimeDescriptions[] = {
    {cudaSuccess, "no error"},
    {cudaErrorInvalidValue, "invalid argument"},
    {cudaErrorMemoryAllocation, "out of memory"},
    {cudaErrorInitializationError, "initialization error"},
    {cudaErrorInvalidConfiguration, "invalid configuration argument"},
    {cudaErrorInvalidSymbol, "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"},
    {cudaErrorMissingConfiguration, "__global__ function call is not configured"},
    {cudaErrorInvalidDeviceFunction, "invalid device function"},
    {cudaErrorNoDevice, "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "invalid device ordinal"},
    {cudaErrorInvalidKernelImage, "device kernel image is invalid"},
    {cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device"},
    {cudaErrorInvalidPtx, "a PTX JIT compilation failed"},
    {cudaErrorInvalidResourceHandle, "invalid resource handle"},
    {cudaErrorSymbolNotFound, "named symbol not found"},
    {cudaErrorNotReady, "device not ready"},
    {cudaErrorIllegalAddress, "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "unspecified launch failure"},
    {cudaErrorInvalidClusterSize, "invalid cluster size"},
    {cudaErrorNotSupported, "operation not supported"},
    {cudaErrorNotPermitted, "operation not permitted"},
    {cudaErrorUnknown, "unknown error"},
};

constexpr std::pair<CUresult, const char*> kDriverDescriptions[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

const char* cudaGetErrorName(cudaError_t error) {
  for (const auto& entry : kRuntimeErrorNames)
    if (entry.error == error) return entry.name;
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  for (const auto& [code, text] : kRuntimeDescriptions)
    if (code == error) return text;
  for (const auto& entry : kRuntimeErrorNames)
    if (entry.error == error) return entry.name;
  return "unrecognized error code";
}

cudaError_t cudaGetLastError(void) { return take_last_error(); }

cudaError_t cudaPeekAtLastError(void) { return peek_last_error(); }

CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const auto& entry : kDriverResultNames)
    if (entry.result == error) {
      *name = entry.name;
      return CUDA_SUCCESS;
    }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const auto& [code, description] : kDriverDescriptions)
    if (code == error) {
      *text = description;
      return CUDA_SUCCESS;
    }
  return cuGetErrorName(error, text);
}

}  // extern "C"
