// Per-kernel attributes (cudaFuncSetAttribute, cudaFuncGetAttributes, cudaFuncGetName) and the
// occupancy queries, answered from the kernel's PTX interface and the GPU model.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "gpu_model.h"
#include "launch.h"
#include "runtime_state.h"

using namespace kgen::emu;

namespace kgen::emu {
namespace {

int ptx_arch_number(const std::string& target) { return target == "sm_100a" ? 100 : 90; }

unsigned cluster_size_of(const cudaLaunchConfig_t* config) {
  if (config == nullptr) return 1;
  for (unsigned i = 0; i < config->numAttrs && config->attrs; ++i)
    if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      const auto& cluster = config->attrs[i].val.clusterDim;
      return cluster.x * cluster.y * cluster.z;
    }
  return 1;
}

cudaError_t occupancy(const char* api, int* blocks, const void* func, int block_threads, size_t dynamic_shared) {
  if (blocks == nullptr) return note_error(cudaErrorInvalidValue);
  const KernelInfo* info = nullptr;
  if (cudaError_t error = loaded_kernel_info(api, Registry::get().find_kernel(func), info)) return error;
  *blocks = blocks_per_multiprocessor(*info, block_threads, dynamic_shared);
  return cudaSuccess;
}

}  // namespace
}  // namespace kgen::emu

extern "C" {

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attribute, int value) {
  constexpr const char* kApi = "cudaFuncSetAttribute";
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  RegisteredKernel* kernel = Registry::get().find_kernel(func);
  const KernelInfo* info = nullptr;
  if (cudaError_t error = loaded_kernel_info(kApi, kernel, info)) return error;
  switch (attribute) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || size_t(value) + info->static_shared_bytes > size_t(GpuModel::kSharedPerBlockOptin))
        return refuse(kApi, cudaErrorInvalidValue,
                      "MaxDynamicSharedMemorySize " + std::to_string(value) + " plus " + info->name + "'s " +
                          std::to_string(info->static_shared_bytes) +
                          " static bytes exceeds the 232448 (227 KiB) a block may opt in to");
      kernel->max_dynamic_shared_bytes = value;
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100)
        return refuse(kApi, cudaErrorInvalidValue, "PreferredSharedMemoryCarveout must be -1..100");
      kernel->preferred_shared_carveout = value;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      if (value != 0 && value != 1)
        return refuse(kApi, cudaErrorInvalidValue, "NonPortableClusterSizeAllowed must be 0 or 1");
      kernel->non_portable_cluster_size_allowed = value;
      return cudaSuccess;
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
      kernel->cluster_scheduling_policy = value;
      return cudaSuccess;
    default:
      return refuse(kApi, cudaErrorInvalidValue,
                    "attribute " + std::to_string(static_cast<int>(attribute)) + " cannot be set");
  }
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* func) {
  if (attributes == nullptr) return note_error(cudaErrorInvalidValue);
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  RegisteredKernel* kernel = Registry::get().find_kernel(func);
  const KernelInfo* info = nullptr;
  if (cudaError_t error = loaded_kernel_info("cudaFuncGetAttributes", kernel, info)) return error;
  std::memset(attributes, 0, sizeof *attributes);
  attributes->sharedSizeBytes = info->static_shared_bytes;
  attributes->maxThreadsPerBlock =
      info->max_threads.count() > 0 ? int(info->max_threads.count()) : GpuModel::kMaxThreadsPerBlock;
  attributes->numRegs = 0;  // unknown: no ptxas runs
  attributes->ptxVersion = ptx_arch_number(info->target);
  attributes->binaryVersion = attributes->ptxVersion;
  attributes->maxDynamicSharedSizeBytes = kernel->max_dynamic_shared_bytes;
  attributes->preferredShmemCarveout = kernel->preferred_shared_carveout;
  attributes->nonPortableClusterSizeAllowed = kernel->non_portable_cluster_size_allowed;
  attributes->clusterSchedulingPolicyPreference = kernel->cluster_scheduling_policy;
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  if (name == nullptr) return note_error(cudaErrorInvalidValue);
  RegisteredKernel* kernel = Registry::get().find_kernel(func);
  if (kernel == nullptr) return note_error(cudaErrorInvalidDeviceFunction);
  *name = kernel->name.c_str();
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_threads,
                                                          size_t dynamic_shared) {
  return occupancy("cudaOccupancyMaxActiveBlocksPerMultiprocessor", blocks, func, block_threads, dynamic_shared);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func, int block_threads,
                                                                   size_t dynamic_shared, unsigned int) {
  return occupancy("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", blocks, func, block_threads,
                   dynamic_shared);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* func, int blocks, int block_threads) {
  if (bytes == nullptr || blocks <= 0) return note_error(cudaErrorInvalidValue);
  const KernelInfo* info = nullptr;
  if (cudaError_t error = loaded_kernel_info("cudaOccupancyAvailableDynamicSMemPerBlock",
                                             Registry::get().find_kernel(func), info))
    return error;
  *bytes = 0;
  if (blocks_per_multiprocessor(*info, block_threads, 0) < blocks) return cudaSuccess;
  size_t per_block = GpuModel::kSharedPerMultiprocessor / size_t(blocks);
  size_t overhead = info->static_shared_bytes + GpuModel::kReservedSharedPerBlock;
  size_t available = per_block > overhead ? per_block - overhead : 0;
  size_t limit = GpuModel::kSharedPerBlockOptin - info->static_shared_bytes;
  *bytes = available < limit ? available : limit;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveClusters(int* clusters, const void* func, const cudaLaunchConfig_t* config) {
  if (clusters == nullptr || config == nullptr) return note_error(cudaErrorInvalidValue);
  int blocks = 0;
  int threads = int(config->blockDim.x * config->blockDim.y * config->blockDim.z);
  if (cudaError_t error = occupancy("cudaOccupancyMaxActiveClusters", &blocks, func, threads, config->dynamicSmemBytes))
    return error;
  unsigned cluster = cluster_size_of(config);
  *clusters = cluster == 0 ? 0 : int(uint64_t(blocks) * current_gpu().multiprocessors / cluster);
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int* cluster_size, const void* func, const cudaLaunchConfig_t*) {
  if (cluster_size == nullptr) return note_error(cudaErrorInvalidValue);
  RegisteredKernel* kernel = Registry::get().find_kernel(func);
  if (kernel == nullptr) return note_error(cudaErrorInvalidDeviceFunction);
  *cluster_size = kernel->non_portable_cluster_size_allowed ? 16 : GpuModel::kMaxPortableClusterSize;
  return cudaSuccess;
}

}  // extern "C"
