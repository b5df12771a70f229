// Device selection and the device's facts: cudaGetDeviceProperties, cudaDeviceGetAttribute,
// the versions. There is one device, ordinal 0.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "gpu_model.h"
#include "runtime_state.h"

namespace kgen::emu {
namespace {

constexpr int kCudaVersion = 13000;

cudaDeviceProp properties_of(const GpuModel& gpu) {
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  std::string name = std::string(gpu.name) + " (ptxemu)";
  std::strncpy(prop.name, name.c_str(), sizeof prop.name - 1);
  // A fixed UUID that says what it is: "ptxemu" then the compute capability.
  const char uuid[16] = {'p', 't', 'x', 'e', 'm', 'u', 0, 0, 0, 0, 0, 0, 0, 0, static_cast<char>(gpu.major),
                         static_cast<char>(gpu.minor)};
  std::memcpy(prop.uuid.bytes, uuid, sizeof uuid);
  prop.totalGlobalMem = gpu.global_memory_bytes;
  prop.sharedMemPerBlock = GpuModel::kSharedPerBlock;
  prop.regsPerBlock = GpuModel::kRegistersPerBlock;
  prop.warpSize = GpuModel::kWarpSize;
  prop.memPitch = 2147483647;
  prop.maxThreadsPerBlock = GpuModel::kMaxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    prop.maxThreadsDim[i] = GpuModel::kMaxBlockDim[i];
    prop.maxGridSize[i] = GpuModel::kMaxGridDim[i];
  }
  prop.totalConstMem = GpuModel::kConstantMemory;
  prop.major = gpu.major;
  prop.minor = gpu.minor;
  prop.textureAlignment = 512;
  prop.texturePitchAlignment = 32;
  prop.multiProcessorCount = gpu.multiprocessors;
  prop.integrated = 0;
  prop.canMapHostMemory = 1;
  prop.maxTexture1D = 131072;
  prop.maxTexture1DMipmap = 32768;
  prop.maxTexture2D[0] = 131072;
  prop.maxTexture2D[1] = 65536;
  prop.maxTexture2DMipmap[0] = 32768;
  prop.maxTexture2DMipmap[1] = 32768;
  prop.maxTexture2DLinear[0] = 131072;
  prop.maxTexture2DLinear[1] = 65000;
  prop.maxTexture2DLinear[2] = 2097120;
  prop.maxTexture2DGather[0] = 32768;
  prop.maxTexture2DGather[1] = 32768;
  for (int i = 0; i < 3; ++i) prop.maxTexture3D[i] = 16384;
  prop.maxTexture3DAlt[0] = 8192;
  prop.maxTexture3DAlt[1] = 8192;
  prop.maxTexture3DAlt[2] = 32768;
  prop.maxTextureCubemap = 32768;
  prop.maxTexture1DLayered[0] = 32768;
  prop.maxTexture1DLayered[1] = 2048;
  prop.maxTexture2DLayered[0] = 32768;
  prop.maxTexture2DLayered[1] = 32768;
  prop.maxTexture2DLayered[2] = 2048;
  prop.maxTextureCubemapLayered[0] = 32768;
  prop.maxTextureCubemapLayered[1] = 2046;
  prop.maxSurface1D = 32768;
  prop.maxSurface2D[0] = 131072;
  prop.maxSurface2D[1] = 65536;
  prop.maxSurface3D[0] = 16384;
  prop.maxSurface3D[1] = 16384;
  prop.maxSurface3D[2] = 16384;
  prop.maxSurface1DLayered[0] = 32768;
  prop.maxSurface1DLayered[1] = 2048;
  prop.maxSurface2DLayered[0] = 32768;
  prop.maxSurface2DLayered[1] = 32768;
  prop.maxSurface2DLayered[2] = 2048;
  prop.maxSurfaceCubemap = 32768;
  prop.maxSurfaceCubemapLayered[0] = 32768;
  prop.maxSurfaceCubemapLayered[1] = 2046;
  prop.surfaceAlignment = 512;
  prop.concurrentKernels = 1;
  prop.ECCEnabled = 1;
  prop.pciBusID = 0;
  prop.pciDeviceID = 0;
  prop.pciDomainID = 0;
  prop.tccDriver = 0;
  prop.asyncEngineCount = 2;
  prop.unifiedAddressing = 1;
  prop.memoryBusWidth = gpu.memory_bus_bits;
  prop.l2CacheSize = gpu.l2_bytes;
  prop.persistingL2CacheMaxSize = gpu.persisting_l2_max_bytes;
  prop.maxThreadsPerMultiProcessor = GpuModel::kMaxThreadsPerMultiprocessor;
  prop.streamPrioritiesSupported = 1;
  prop.globalL1CacheSupported = 1;
  prop.localL1CacheSupported = 1;
  prop.sharedMemPerMultiprocessor = GpuModel::kSharedPerMultiprocessor;
  prop.regsPerMultiprocessor = GpuModel::kRegistersPerMultiprocessor;
  prop.managedMemory = 0;  // cudaMallocManaged is not emulated
  prop.isMultiGpuBoard = 0;
  prop.multiGpuBoardGroupID = 0;
  prop.hostNativeAtomicSupported = 0;
  prop.pageableMemoryAccess = 0;
  prop.concurrentManagedAccess = 0;
  prop.computePreemptionSupported = 1;
  prop.canUseHostPointerForRegisteredMem = 1;
  prop.cooperativeLaunch = 1;
  prop.sharedMemPerBlockOptin = GpuModel::kSharedPerBlockOptin;
  prop.pageableMemoryAccessUsesHostPageTables = 0;
  prop.directManagedMemAccessFromHost = 0;
  prop.maxBlocksPerMultiProcessor = GpuModel::kMaxBlocksPerMultiprocessor;
  prop.accessPolicyMaxWindowSize = 134213632;
  prop.reservedSharedMemPerBlock = GpuModel::kReservedSharedPerBlock;
  prop.hostRegisterSupported = 0;
  prop.sparseCudaArraySupported = 0;
  prop.hostRegisterReadOnlySupported = 0;
  prop.timelineSemaphoreInteropSupported = 0;
  prop.memoryPoolsSupported = 0;  // cudaMallocAsync is not emulated
  prop.gpuDirectRDMASupported = 0;
  prop.gpuDirectRDMAFlushWritesOptions = 0;
  prop.gpuDirectRDMAWritesOrdering = 0;
  prop.memoryPoolSupportedHandleTypes = 0;
  prop.deferredMappingCudaArraySupported = 0;
  prop.ipcEventSupported = 0;
  prop.clusterLaunch = 1;
  prop.unifiedFunctionPointers = 1;
  prop.deviceNumaConfig = 0;
  prop.deviceNumaId = -1;
  prop.mpsEnabled = 0;
  prop.hostNumaId = -1;
  prop.gpuPciDeviceID = (static_cast<unsigned>(gpu.pci_device_id) << 16) | 0x10deu;
  prop.gpuPciSubsystemID = 0;
  prop.hostNumaMultinodeIpcSupported = 0;
  return prop;
}

bool device_attribute(cudaDeviceAttr attribute, const GpuModel& gpu, int& value) {
  const cudaDeviceProp prop = properties_of(gpu);
  switch (attribute) {
    case cudaDevAttrMaxThreadsPerBlock: value = prop.maxThreadsPerBlock; return true;
    case cudaDevAttrMaxBlockDimX: value = prop.maxThreadsDim[0]; return true;
    case cudaDevAttrMaxBlockDimY: value = prop.maxThreadsDim[1]; return true;
    case cudaDevAttrMaxBlockDimZ: value = prop.maxThreadsDim[2]; return true;
    case cudaDevAttrMaxGridDimX: value = prop.maxGridSize[0]; return true;
    case cudaDevAttrMaxGridDimY: value = prop.maxGridSize[1]; return true;
    case cudaDevAttrMaxGridDimZ: value = prop.maxGridSize[2]; return true;
    case cudaDevAttrMaxSharedMemoryPerBlock: value = static_cast<int>(prop.sharedMemPerBlock); return true;
    case cudaDevAttrTotalConstantMemory: value = static_cast<int>(prop.totalConstMem); return true;
    case cudaDevAttrWarpSize: value = prop.warpSize; return true;
    case cudaDevAttrMaxPitch: value = static_cast<int>(prop.memPitch); return true;
    case cudaDevAttrMaxRegistersPerBlock: value = prop.regsPerBlock; return true;
    case cudaDevAttrClockRate: value = gpu.clock_khz; return true;
    case cudaDevAttrTextureAlignment: value = static_cast<int>(prop.textureAlignment); return true;
    case cudaDevAttrGpuOverlap: value = 1; return true;
    case cudaDevAttrMultiProcessorCount: value = prop.multiProcessorCount; return true;
    case cudaDevAttrKernelExecTimeout: value = 0; return true;
    case cudaDevAttrIntegrated: value = prop.integrated; return true;
    case cudaDevAttrCanMapHostMemory: value = prop.canMapHostMemory; return true;
    case cudaDevAttrComputeMode: value = cudaComputeModeDefault; return true;
    case cudaDevAttrMaxTexture1DWidth: value = prop.maxTexture1D; return true;
    case cudaDevAttrMaxTexture2DWidth: value = prop.maxTexture2D[0]; return true;
    case cudaDevAttrMaxTexture2DHeight: value = prop.maxTexture2D[1]; return true;
    case cudaDevAttrMaxTexture3DWidth: value = prop.maxTexture3D[0]; return true;
    case cudaDevAttrMaxTexture3DHeight: value = prop.maxTexture3D[1]; return true;
    case cudaDevAttrMaxTexture3DDepth: value = prop.maxTexture3D[2]; return true;
    case cudaDevAttrSurfaceAlignment: value = static_cast<int>(prop.surfaceAlignment); return true;
    case cudaDevAttrConcurrentKernels: value = prop.concurrentKernels; return true;
    case cudaDevAttrEccEnabled: value = prop.ECCEnabled; return true;
    case cudaDevAttrPciBusId: value = prop.pciBusID; return true;
    case cudaDevAttrPciDeviceId: value = prop.pciDeviceID; return true;
    case cudaDevAttrTccDriver: value = prop.tccDriver; return true;
    case cudaDevAttrMemoryClockRate: value = gpu.memory_clock_khz; return true;
    case cudaDevAttrGlobalMemoryBusWidth: value = prop.memoryBusWidth; return true;
    case cudaDevAttrL2CacheSize: value = prop.l2CacheSize; return true;
    case cudaDevAttrMaxThreadsPerMultiProcessor: value = prop.maxThreadsPerMultiProcessor; return true;
    case cudaDevAttrAsyncEngineCount: value = prop.asyncEngineCount; return true;
    case cudaDevAttrUnifiedAddressing: value = prop.unifiedAddressing; return true;
    case cudaDevAttrPciDomainId: value = prop.pciDomainID; return true;
    case cudaDevAttrTexturePitchAlignment: value = static_cast<int>(prop.texturePitchAlignment); return true;
    case cudaDevAttrComputeCapabilityMajor: value = prop.major; return true;
    case cudaDevAttrComputeCapabilityMinor: value = prop.minor; return true;
    case cudaDevAttrStreamPrioritiesSupported: value = prop.streamPrioritiesSupported; return true;
    case cudaDevAttrGlobalL1CacheSupported: value = prop.globalL1CacheSupported; return true;
    case cudaDevAttrLocalL1CacheSupported: value = prop.localL1CacheSupported; return true;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: value = static_cast<int>(prop.sharedMemPerMultiprocessor); return true;
    case cudaDevAttrMaxRegistersPerMultiprocessor: value = prop.regsPerMultiprocessor; return true;
    case cudaDevAttrManagedMemory: value = prop.managedMemory; return true;
    case cudaDevAttrIsMultiGpuBoard: value = prop.isMultiGpuBoard; return true;
    case cudaDevAttrMultiGpuBoardGroupID: value = prop.multiGpuBoardGroupID; return true;
    case cudaDevAttrHostNativeAtomicSupported: value = prop.hostNativeAtomicSupported; return true;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: value = 2; return true;
    case cudaDevAttrPageableMemoryAccess: value = prop.pageableMemoryAccess; return true;
    case cudaDevAttrConcurrentManagedAccess: value = prop.concurrentManagedAccess; return true;
    case cudaDevAttrComputePreemptionSupported: value = prop.computePreemptionSupported; return true;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: value = prop.canUseHostPointerForRegisteredMem; return true;
    case cudaDevAttrCooperativeLaunch: value = prop.cooperativeLaunch; return true;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: value = static_cast<int>(prop.sharedMemPerBlockOptin); return true;
    case cudaDevAttrCanFlushRemoteWrites: value = 0; return true;
    case cudaDevAttrHostRegisterSupported: value = prop.hostRegisterSupported; return true;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: value = prop.pageableMemoryAccessUsesHostPageTables; return true;
    case cudaDevAttrDirectManagedMemAccessFromHost: value = prop.directManagedMemAccessFromHost; return true;
    case cudaDevAttrMaxBlocksPerMultiprocessor: value = prop.maxBlocksPerMultiProcessor; return true;
    case cudaDevAttrMaxPersistingL2CacheSize: value = prop.persistingL2CacheMaxSize; return true;
    case cudaDevAttrMaxAccessPolicyWindowSize: value = prop.accessPolicyMaxWindowSize; return true;
    case cudaDevAttrReservedSharedMemoryPerBlock: value = static_cast<int>(prop.reservedSharedMemPerBlock); return true;
    case cudaDevAttrSparseCudaArraySupported: value = prop.sparseCudaArraySupported; return true;
    case cudaDevAttrHostRegisterReadOnlySupported: value = prop.hostRegisterReadOnlySupported; return true;
    case cudaDevAttrTimelineSemaphoreInteropSupported: value = prop.timelineSemaphoreInteropSupported; return true;
    case cudaDevAttrMemoryPoolsSupported: value = prop.memoryPoolsSupported; return true;
    case cudaDevAttrGPUDirectRDMASupported: value = prop.gpuDirectRDMASupported; return true;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions: value = static_cast<int>(prop.gpuDirectRDMAFlushWritesOptions); return true;
    case cudaDevAttrGPUDirectRDMAWritesOrdering: value = prop.gpuDirectRDMAWritesOrdering; return true;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: value = static_cast<int>(prop.memoryPoolSupportedHandleTypes); return true;
    case cudaDevAttrClusterLaunch: value = prop.clusterLaunch; return true;
    case cudaDevAttrDeferredMappingCudaArraySupported: value = prop.deferredMappingCudaArraySupported; return true;
    case cudaDevAttrIpcEventSupport: value = prop.ipcEventSupported; return true;
    case cudaDevAttrMemSyncDomainCount: value = 4; return true;
    case cudaDevAttrNumaConfig: value = prop.deviceNumaConfig; return true;
    case cudaDevAttrNumaId: value = prop.deviceNumaId; return true;
    case cudaDevAttrMpsEnabled: value = prop.mpsEnabled; return true;
    case cudaDevAttrHostNumaId: value = prop.hostNumaId; return true;
    case cudaDevAttrGpuPciDeviceId: value = static_cast<int>(prop.gpuPciDeviceID); return true;
    case cudaDevAttrGpuPciSubsystemId: value = static_cast<int>(prop.gpuPciSubsystemID); return true;
    case cudaDevAttrHostNumaMultinodeIpcSupported: value = prop.hostNumaMultinodeIpcSupported; return true;
    default: return false;
  }
}

}  // namespace
}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return note_error(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return note_error(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device != 0) return note_error(cudaErrorInvalidDevice);
  return cudaSuccess;
}

cudaError_t cudaInitDevice(int device, unsigned int, unsigned int) { return cudaSetDevice(device); }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return note_error(cudaErrorInvalidValue);
  if (device != 0) return note_error(cudaErrorInvalidDevice);
  *prop = properties_of(current_gpu());
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (value == nullptr) return note_error(cudaErrorInvalidValue);
  if (device != 0) return note_error(cudaErrorInvalidDevice);
  if (!device_attribute(attribute, current_gpu(), *value))
    return refuse("cudaDeviceGetAttribute", cudaErrorInvalidValue,
                  "attribute " + std::to_string(static_cast<int>(attribute)) + " is not known to ptxemu");
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return note_error(cudaErrorInvalidValue);
  *version = kCudaVersion;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return note_error(cudaErrorInvalidValue);
  *version = kCudaVersion;
  return cudaSuccess;
}

}  // extern "C"
