// The registration and launch path with a fake Device: kernels compiled by nvcc-emu
// (test_kernels.cu) launched with <<<>>> and the launch APIs, the launch checks, sticky errors,
// memory, streams and events, device facts and driver entry points.
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "../../host/runtime_state.h"
#include "fake_device.h"
#include "test_kernels.h"

namespace {

using kgen::emu::testing::fake_device;

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    kgen::emu::reset_runtime_errors_for_testing();
    fake_device().launches.clear();
    fake_device().throw_on_launch.clear();
    setenv("KGEN_EMU_CONTINUE", "1", 1);
  }
  void TearDown() override { kgen::emu::reset_runtime_errors_for_testing(); }
};

template <class T>
std::vector<unsigned char> bytes_of(const T& value) {
  const auto* p = reinterpret_cast<const unsigned char*>(&value);
  return {p, p + sizeof value};
}

TEST_F(Runtime, TripleChevronLaunchPassesArgumentBytes) {
  float *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 64), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 64), cudaSuccess);
  ASSERT_EQ(launch_add(a, b, 13, dim3(2, 3), dim3(32, 2), 0), cudaSuccess);
  ASSERT_EQ(fake_device().launches.size(), 1u);
  const auto& launch = fake_device().launches[0];
  EXPECT_EQ(launch.kernel, "_Z3addPKfPfi");
  EXPECT_EQ(launch.grid.x, 2u);
  EXPECT_EQ(launch.grid.y, 3u);
  EXPECT_EQ(launch.block.x, 32u);
  EXPECT_EQ(launch.block.y, 2u);
  ASSERT_EQ(launch.args.size(), 3u);
  EXPECT_EQ(launch.args[0], bytes_of(a));
  EXPECT_EQ(launch.args[1], bytes_of(b));
  EXPECT_EQ(launch.args[2], bytes_of(13));
  EXPECT_EQ(cudaFree(a), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
}

TEST_F(Runtime, StructByValueArrivesWhole) {
  ByValue value{};
  for (int i = 0; i < 40; ++i) value.bytes[i] = char(i * 3);
  value.scale = 2.5;
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 4), cudaSuccess);
  ASSERT_EQ(launch_by_value(value, out), cudaSuccess);
  ASSERT_EQ(fake_device().launches.size(), 1u);
  EXPECT_EQ(fake_device().launches[0].args[0], bytes_of(value));
  cudaFree(out);
}

TEST_F(Runtime, CudaLaunchKernelByFunctionPointer) {
  float *a = nullptr, *b = nullptr;
  int n = 7;
  ASSERT_EQ(cudaMalloc(&a, 64), cudaSuccess);
  b = a;
  void* args[] = {&a, &b, &n};
  ASSERT_EQ(cudaLaunchKernel(add_function(), dim3(1), dim3(64), args, 0, nullptr), cudaSuccess);
  ASSERT_EQ(fake_device().launches.size(), 1u);
  EXPECT_EQ(fake_device().launches[0].args[2], bytes_of(7));
  cudaFree(a);
}

TEST_F(Runtime, LaunchKernelExCPassesClustersThatTileTheGrid) {
  float* a = nullptr;
  int n = 1;
  ASSERT_EQ(cudaMalloc(&a, 64), cudaSuccess);
  void* args[] = {&a, &a, &n};
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(4);
  config.blockDim = dim3(32);
  config.attrs = &attribute;
  config.numAttrs = 1;
  EXPECT_EQ(cudaLaunchKernelExC(&config, add_function(), args), cudaSuccess);
  attribute.val.clusterDim.x = 2;
  EXPECT_EQ(cudaLaunchKernelExC(&config, add_function(), args), cudaSuccess);
  ASSERT_EQ(fake_device().launches.size(), 2u);
  EXPECT_EQ(fake_device().launches[1].cluster.x, 2u);
  EXPECT_TRUE(fake_device().launches[1].explicit_cluster);
  attribute.val.clusterDim.x = 3;  // 4 CTAs are no whole number of clusters of 3
  EXPECT_EQ(cudaLaunchKernelExC(&config, add_function(), args), cudaErrorInvalidClusterSize);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidClusterSize);
  config.gridDim = dim3(16);
  attribute.val.clusterDim.x = 16;  // more than the portable 8 without NonPortableClusterSizeAllowed
  EXPECT_EQ(cudaLaunchKernelExC(&config, add_function(), args), cudaErrorInvalidClusterSize);
  EXPECT_EQ(fake_device().launches.size(), 2u);
  cudaFree(a);
}

TEST_F(Runtime, ConfigurationErrorsAreNotSticky) {
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(2048)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(0), dim3(32)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1, 65536), dim3(32)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32, 1, 65)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(fake_device().launches.size(), 0u);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32)), cudaSuccess);
}

TEST_F(Runtime, MaxntidIsEnforced) {
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 1024), cudaSuccess);
  EXPECT_EQ(launch_bounded(out, 128), cudaSuccess);
  EXPECT_EQ(launch_bounded(out, 256), cudaErrorLaunchOutOfResources);
  EXPECT_EQ(fake_device().launches.size(), 1u);
  cudaFree(out);
}

TEST_F(Runtime, DynamicSharedMemoryNeedsTheAttribute) {
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 1024), cudaSuccess);
  EXPECT_EQ(launch_uses_shared(out, 48 * 1024), cudaSuccess);
  EXPECT_EQ(launch_uses_shared(out, 64 * 1024), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(uses_shared_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024),
            cudaSuccess);
  EXPECT_EQ(launch_uses_shared(out, 64 * 1024), cudaSuccess);
  // 1024 static bytes leave 232448 - 1024 to opt in to.
  EXPECT_EQ(cudaFuncSetAttribute(uses_shared_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 232448 - 1024),
            cudaSuccess);
  EXPECT_EQ(cudaFuncSetAttribute(uses_shared_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 232448 - 1023),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);  // the helpers below return the last error
  cudaFuncAttributes attributes;
  ASSERT_EQ(cudaFuncGetAttributes(&attributes, uses_shared_function()), cudaSuccess);
  EXPECT_EQ(attributes.sharedSizeBytes, 1024u);
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 232448 - 1024);
  EXPECT_EQ(attributes.ptxVersion, 90);
  EXPECT_EQ(launch_uses_shared(out, 232448 - 1024), cudaSuccess);
  EXPECT_EQ(launch_uses_shared(out, 232448 - 1023), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(uses_shared_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024),
            cudaSuccess);
  cudaFree(out);
}

TEST_F(Runtime, UnregisteredFunctionIsRefused) {
  int not_a_kernel = 0;
  EXPECT_EQ(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), nullptr, 0, nullptr), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaFuncSetAttribute(&not_a_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0),
            cudaErrorInvalidDeviceFunction);
}

TEST_F(Runtime, FindingIsStickyLaunchFailure) {
  fake_device().throw_on_launch = "out-of-bounds store by CTA (0,0,0) thread 5";
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32)), cudaErrorLaunchFailure);
  fake_device().throw_on_launch.clear();
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);  // sticky: not cleared
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32)), cudaErrorLaunchFailure);
  EXPECT_EQ(fake_device().launches.size(), 0u);
}

TEST(RuntimeDeathTest, FindingExitsTheProcessByDefault) {
  EXPECT_EXIT(
      {
        unsetenv("KGEN_EMU_CONTINUE");
        fake_device().throw_on_launch = "illegal address 0x10 in _Z3addPKfPfi";
        launch_add(nullptr, nullptr, 0, dim3(1), dim3(32));
      },
      ::testing::ExitedWithCode(1), "ptxemu: illegal address 0x10 in _Z3addPKfPfi");
}

TEST_F(Runtime, MemcpyChecksRanges) {
  char* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 100), cudaSuccess);
  std::vector<char> host(200, 7);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 100, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 101, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(device + 50, host.data(), 51, cudaMemcpyDefault), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), device, 100, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host.data(), host.data() + 100, 100, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(nullptr, host.data(), 4, cudaMemcpyHostToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(device, device + 50, 50, cudaMemcpyDeviceToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 4, static_cast<cudaMemcpyKind>(9)), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMemset(device, 3, 100), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(device + 1, 3, 100, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(host.data(), device, 100, cudaMemcpyDefault, nullptr), cudaSuccess);
  EXPECT_EQ(host[99], 3);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaFree(device + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
}

TEST_F(Runtime, MemGetInfoCountsAllocations) {
  size_t free_before = 0, total = 0, free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before - free_after, size_t{1} << 20);
  cudaFree(p);
}

TEST_F(Runtime, PinnedHostMemoryIsHostMemory) {
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 256), cudaSuccess);
  std::memset(pinned, 1, 256);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, static_cast<char*>(pinned) + 10), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaHostAlloc(&pinned, 64, cudaHostAllocDefault), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST_F(Runtime, StreamsAndEvents) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle);  // not recorded
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32), 0, stream), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(stop, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 15.0f);
  EXPECT_LT(ms, 5000.0f);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(launch_add(nullptr, nullptr, 0, dim3(1), dim3(32), 0, stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
  cudaGetLastError();
}

TEST_F(Runtime, DeviceIsAnH100ForSm90aModules) {
  int count = 0, device = -1, value = 0;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.minor, 0);
  EXPECT_EQ(prop.multiProcessorCount, 132);
  EXPECT_EQ(prop.sharedMemPerBlockOptin, 232448u);
  EXPECT_NE(std::string(prop.name).find("H100"), std::string::npos);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
  EXPECT_EQ(value, 232448);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_EQ(value, 132);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  EXPECT_EQ(value, 9);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, 0), cudaSuccess);
  EXPECT_GT(value, 1000000);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  EXPECT_EQ(value, 50 * 1024 * 1024);
  int version = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&version), cudaSuccess);
  EXPECT_EQ(version, 13000);
  EXPECT_EQ(cudaDriverGetVersion(&version), cudaSuccess);
  EXPECT_EQ(version, 13000);
}

TEST_F(Runtime, OccupancyIsSane) {
  int blocks = 0;
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_function(), 128, 0), cudaSuccess);
  EXPECT_EQ(blocks, 16);  // 2048 threads per SM
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_shared_function(), 256, 100 * 1024),
            cudaSuccess);
  EXPECT_EQ(blocks, 2);  // 228 KiB per SM / (1 KiB static + 100 KiB + 1 KiB reserved)
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_function(), 2048, 0), cudaSuccess);
  EXPECT_EQ(blocks, 0);
}

TEST_F(Runtime, DriverEntryPoints) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status;
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &status),
            cudaSuccess);
  EXPECT_EQ(status, cudaDriverEntryPointSuccess);
  EXPECT_EQ(function, reinterpret_cast<void*>(&cuTensorMapEncodeTiled));
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &function, 12000, cudaEnableDefault, &status),
            cudaSuccess);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(function, nullptr);
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 11000, cudaEnableDefault, &status),
            cudaSuccess);
  EXPECT_EQ(status, cudaDriverEntryPointVersionNotSufficent);
  const char* text = nullptr;
  EXPECT_EQ(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text), CUDA_SUCCESS);
  EXPECT_STREQ(text, "invalid argument");
  EXPECT_EQ(cuGetErrorName(CUDA_ERROR_NOT_SUPPORTED, &text), CUDA_SUCCESS);
  EXPECT_STREQ(text, "CUDA_ERROR_NOT_SUPPORTED");
}

TEST_F(Runtime, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorLaunchFailure), "unspecified launch failure");
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorStreamCaptureMerge), "cudaErrorStreamCaptureMerge");
}

TEST_F(Runtime, CuMemsetAsyncFillsElements) {
  unsigned* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 64), cudaSuccess);
  EXPECT_EQ(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(device), 0x01020304u, 16, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(device[15], 0x01020304u);
  EXPECT_EQ(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(device), 0, 17, nullptr), CUDA_ERROR_INVALID_VALUE);
  cudaFree(device);
}

}  // namespace
