#include "launch.h"

#include <algorithm>
#include <string>

#include "gpu_model.h"
#include "runtime_state.h"
#include "streams.h"

namespace kgen::emu {
namespace {

std::string dims(dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

uint64_t count(dim3 d) { return uint64_t{d.x} * d.y * d.z; }

// The checks of the launch configuration, in the order CUDA makes them; each failure is a
// non-sticky error as on the hardware, with a line on stderr saying which limit was hit.
cudaError_t check_configuration(const LaunchRequest& request, const KernelInfo& info) {
  const std::string what = request.api + std::string(" of ") + info.name;
  const dim3 block = request.block, grid = request.grid;
  if (count(block) == 0 || count(grid) == 0)
    return refuse(what, cudaErrorInvalidConfiguration, "empty grid " + dims(grid) + " or block " + dims(block));
  if (block.x > unsigned(GpuModel::kMaxBlockDim[0]) || block.y > unsigned(GpuModel::kMaxBlockDim[1]) ||
      block.z > unsigned(GpuModel::kMaxBlockDim[2]) || count(block) > unsigned(GpuModel::kMaxThreadsPerBlock))
    return refuse(what, cudaErrorInvalidConfiguration,
                  "block " + dims(block) + " exceeds 1024 threads or the (1024, 1024, 64) dimensions");
  if (grid.x > unsigned(GpuModel::kMaxGridDim[0]) || grid.y > unsigned(GpuModel::kMaxGridDim[1]) ||
      grid.z > unsigned(GpuModel::kMaxGridDim[2]))
    return refuse(what, cudaErrorInvalidConfiguration, "grid " + dims(grid) + " exceeds (2^31 - 1, 65535, 65535)");
  if (info.max_threads.count() > 0 && count(block) > info.max_threads.count())
    return refuse(what, cudaErrorLaunchOutOfResources,
                  "block " + dims(block) + " has more threads than the kernel's .maxntid " + dims(info.max_threads));
  if (request.dynamic_shared_bytes > size_t(request.kernel->max_dynamic_shared_bytes))
    return refuse(what, cudaErrorInvalidValue,
                  std::to_string(request.dynamic_shared_bytes) +
                      " bytes of dynamic shared memory exceed the function's cudaFuncAttributeMaxDynamicSharedMemorySize (" +
                      std::to_string(request.kernel->max_dynamic_shared_bytes) + ")");
  if (info.static_shared_bytes + request.dynamic_shared_bytes > size_t(GpuModel::kSharedPerBlockOptin))
    return refuse(what, cudaErrorInvalidValue,
                  std::to_string(info.static_shared_bytes) + " static + " + std::to_string(request.dynamic_shared_bytes) +
                      " dynamic bytes of shared memory exceed the 232448 (227 KiB) a block may have");
  const dim3 cluster = request.cluster.x * request.cluster.y * request.cluster.z > 1 || info.required_cluster.count() == 0
                           ? request.cluster
                           : dim3(info.required_cluster.x, info.required_cluster.y, info.required_cluster.z);
  const unsigned cluster_limit = request.kernel->non_portable_cluster_size_allowed ? 16 : GpuModel::kMaxPortableClusterSize;
  if (info.required_cluster.count() > 0 && request.cluster.x * request.cluster.y * request.cluster.z > 1 &&
      (cluster.x != request.cluster.x || cluster.y != request.cluster.y || cluster.z != request.cluster.z))
    return refuse(what, cudaErrorInvalidClusterSize,
                  "cluster " + dims(request.cluster) + " differs from the kernel's __cluster_dims__ " +
                      dims(info.required_cluster));
  if (count(cluster) == 0 || count(cluster) > cluster_limit)
    return refuse(what, cudaErrorInvalidClusterSize,
                  "cluster " + dims(cluster) + " has more than " + std::to_string(cluster_limit) +
                      " CTAs (cudaFuncAttributeNonPortableClusterSizeAllowed raises the limit to 16)");
  if (grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
    return refuse(what, cudaErrorInvalidClusterSize, "grid " + dims(grid) + " is not a multiple of the cluster " + dims(cluster));
  if (info.explicit_cluster && !request.explicit_cluster && info.required_cluster.count() == 0)
    return refuse(what, cudaErrorInvalidClusterSize, "the kernel is .explicitcluster but the launch gives no cluster");
  if (!info.param_sizes.empty() && request.args == nullptr)
    return refuse(what, cudaErrorInvalidValue,
                  "the kernel takes " + std::to_string(info.param_sizes.size()) + " parameters but args is null");
  return cudaSuccess;
}

}  // namespace

cudaError_t loaded_kernel_info(const char* api, const RegisteredKernel* kernel, const KernelInfo*& info) {
  info = nullptr;
  if (kernel == nullptr)
    return refuse(api, cudaErrorInvalidDeviceFunction,
                  "the function is not a kernel registered by an nvcc-compiled module");
  for (const std::string& report : Registry::get().load_modules()) report_finding(report);
  if (kernel->module == nullptr || !kernel->module->loaded)
    return note_error(kernel->module && !kernel->module->contents.ptx.empty() ? cudaErrorInvalidPtx
                                                                              : cudaErrorNoKernelImageForDevice);
  info = Device::get().kernel(kernel->name);
  if (info == nullptr)
    return refuse(api, cudaErrorInvalidDeviceFunction, "the loaded PTX has no kernel " + kernel->name);
  return cudaSuccess;
}

int blocks_per_multiprocessor(const KernelInfo& info, int block_threads, size_t dynamic_shared_bytes) {
  if (block_threads <= 0 || block_threads > GpuModel::kMaxThreadsPerBlock) return 0;
  if (info.max_threads.count() > 0 && uint64_t(block_threads) > info.max_threads.count()) return 0;
  size_t shared = info.static_shared_bytes + dynamic_shared_bytes;
  if (shared > size_t(GpuModel::kSharedPerBlockOptin)) return 0;
  int warps = (block_threads + GpuModel::kWarpSize - 1) / GpuModel::kWarpSize;
  int by_threads = GpuModel::kMaxThreadsPerMultiprocessor / (warps * GpuModel::kWarpSize);
  int by_shared = int(GpuModel::kSharedPerMultiprocessor / (shared + GpuModel::kReservedSharedPerBlock));
  return std::min({by_threads, by_shared, GpuModel::kMaxBlocksPerMultiprocessor});
}

cudaError_t launch_kernel(const LaunchRequest& request) {
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  const KernelInfo* info = nullptr;
  if (cudaError_t error = loaded_kernel_info(request.api, request.kernel, info)) return error;
  if (!valid_stream(request.stream))
    return refuse(request.api, cudaErrorInvalidResourceHandle, "the stream is not a live stream");
  if (cudaError_t error = check_configuration(request, *info)) return error;
  const Dim3 grid{request.grid.x, request.grid.y, request.grid.z};
  const Dim3 block{request.block.x, request.block.y, request.block.z};
  try {
    const Dim3 cluster{request.cluster.x, request.cluster.y, request.cluster.z};
    Device::get().launch(info->name, grid, block, static_cast<uint32_t>(request.dynamic_shared_bytes), request.args,
                         cluster, request.explicit_cluster);
  } catch (const EmulationError& finding) {
    return report_finding(finding.what());
  } catch (const std::exception& error) {
    return report_finding("internal error of the emulator while running " + info->name + " grid " + dims(grid) +
                          " block " + dims(block) + ": " + error.what());
  }
  return cudaSuccess;
}

}  // namespace kgen::emu
