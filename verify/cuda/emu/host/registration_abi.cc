// The entry points nvcc 13's host code calls (crt/host_runtime.h, crt/device_functions.h):
// the static constructor of every compiled .cu registers its fat binary, kernels and
// variables; a <<<grid, block, shared, stream>>> expression pushes its configuration, and
// the kernel's host stub pops it, turns the function into a cudaKernel_t with
// __cudaGetKernel and launches with __cudaLaunchKernel.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "launch.h"
#include "registry.h"
#include "runtime_state.h"

namespace kgen::emu {
namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t stream = nullptr;
};

// <<<>>> expressions may nest (a kernel argument computed by a call that itself launches), so
// the configurations form a stack; each thread has its own.
thread_local std::vector<CallConfiguration> pending_configurations;

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) { return Registry::get().add_fatbin(fat_cubin); }

void __cudaRegisterFatBinaryEnd(void**) {}

void __cudaUnregisterFatBinary(void** handle) { Registry::get().remove_fatbin(handle); }

void __cudaRegisterFunction(void** handle, const char* host_function, char* /*device_function*/,
                            const char* device_name, int /*thread_limit*/, uint3* /*tid*/, uint3* /*bid*/,
                            dim3* /*block*/, dim3* /*grid*/, int* /*warp_size*/) {
  Registry::get().add_function(handle, host_function, device_name);
}

void __cudaRegisterVar(void** handle, char* host_variable, char* /*device_address*/, const char* device_name,
                       int /*external*/, size_t bytes, int constant, int /*global*/) {
  Registry::get().add_variable(handle, host_variable, device_name, bytes, constant != 0);
}

void __cudaRegisterManagedVar(void** handle, void** host_variable_address, char*, const char* device_name, int,
                              size_t bytes, int constant, int) {
  std::fprintf(stderr, "ptxemu: __managed__ variable %s is not emulated; reading it on the host sees garbage\n",
               device_name ? device_name : "?");
  Registry::get().add_variable(handle, host_variable_address, device_name, bytes, constant != 0);
}

// Called before the host first touches a __managed__ variable, and the stub caches a nonzero
// answer. Managed memory is not emulated (__cudaRegisterManagedVar said so): nothing to do.
char __cudaInitModule(void**) { return 1; }

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, CUstream_st* stream) {
  pending_configurations.push_back({grid, block, shared, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  if (pending_configurations.empty()) return note_error(cudaErrorMissingConfiguration);
  const CallConfiguration configuration = pending_configurations.back();
  pending_configurations.pop_back();
  *grid = configuration.grid;
  *block = configuration.block;
  *shared = configuration.shared;
  *static_cast<cudaStream_t*>(stream) = configuration.stream;
  return cudaSuccess;
}

// A cudaKernel_t is the address of the RegisteredKernel: opaque to the program, checked here.
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_function) {
  if (kernel == nullptr) return note_error(cudaErrorInvalidValue);
  RegisteredKernel* registered = Registry::get().find_kernel(host_function);
  *kernel = reinterpret_cast<cudaKernel_t>(registered);
  return registered ? cudaSuccess : note_error(cudaErrorInvalidDeviceFunction);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                               cudaStream_t stream) {
  return launch_kernel({"kernel<<<>>>", Registry::get().find_kernel_by_handle(kernel), grid, block, shared, stream,
                        args});
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

}  // extern "C"
