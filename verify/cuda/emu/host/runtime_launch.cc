// The launch APIs programs call directly (cudaLaunchKernel, cudaLaunchKernelExC,
// cudaLaunchCooperativeKernel); <<<>>> comes through registration_abi.cc.
#include <cuda_runtime_api.h>

#include <string>

#include "launch.h"
#include "runtime_state.h"

using namespace kgen::emu;

namespace kgen::emu {
namespace {

// The launch attributes cudaLaunchKernelExC accepts: cluster dimensions (the CTAs of a cluster
// run together, core/cta_runner.cc), and those that change nothing in a sequential emulation
// (priorities, cache policies, programmatic dependent launch, whose kernels then simply run one
// after the other; a preferred cluster shape, which the hardware may ignore, falling back to
// the required one). Everything else is refused. `request` gets the cluster.
cudaError_t check_launch_attributes(const cudaLaunchConfig_t& config, LaunchRequest& request) {
  constexpr const char* kApi = "cudaLaunchKernelExC";
  if (config.numAttrs > 0 && config.attrs == nullptr) return refuse(kApi, cudaErrorInvalidValue, "attrs is null");
  for (unsigned i = 0; i < config.numAttrs; ++i) {
    const cudaLaunchAttribute& attribute = config.attrs[i];
    switch (attribute.id) {
      case cudaLaunchAttributeClusterDimension: {
        const auto& c = attribute.val.clusterDim;
        if (uint64_t{c.x} * c.y * c.z == 0)
          return refuse(kApi, cudaErrorInvalidClusterSize, "cluster dimension with a zero extent");
        request.cluster = dim3(c.x, c.y, c.z);
        request.explicit_cluster = true;
        break;
      }
      case cudaLaunchAttributePreferredClusterDimension:
      case cudaLaunchAttributeIgnore:
      case cudaLaunchAttributeAccessPolicyWindow:
      case cudaLaunchAttributeCooperative:
      case cudaLaunchAttributeSynchronizationPolicy:
      case cudaLaunchAttributeClusterSchedulingPolicyPreference:
      case cudaLaunchAttributeProgrammaticStreamSerialization:
      case cudaLaunchAttributePriority:
      case cudaLaunchAttributeMemSyncDomainMap:
      case cudaLaunchAttributeMemSyncDomain:
      case cudaLaunchAttributePreferredSharedMemoryCarveout:
      case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        break;
      default:
        return refuse(kApi, cudaErrorNotSupported,
                      "launch attribute " + std::to_string(static_cast<int>(attribute.id)) + " is not emulated");
    }
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace kgen::emu

extern "C" {

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
  return launch_kernel({"cudaLaunchKernel", Registry::get().find_kernel(func), grid, block, shared, stream, args});
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                        cudaStream_t stream) {
  return launch_kernel({"cudaLaunchCooperativeKernel", Registry::get().find_kernel(func), grid, block, shared, stream,
                        args});
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (config == nullptr) return refuse("cudaLaunchKernelExC", cudaErrorInvalidValue, "config is null");
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  LaunchRequest request{"cudaLaunchKernelExC", Registry::get().find_kernel(func), config->gridDim, config->blockDim,
                        config->dynamicSmemBytes, config->stream, args};
  if (cudaError_t error = check_launch_attributes(*config, request)) return error;
  return launch_kernel(request);
}

}  // extern "C"
