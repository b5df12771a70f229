#include "gpu_model.h"

#include "registry.h"

namespace kgen::emu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// H100 SXM5 80 GB (compute capability 9.0, 132 SMs).
constexpr GpuModel kH100{
    .name = "NVIDIA H100 80GB HBM3",
    .target = "sm_90a",
    .major = 9,
    .minor = 0,
    .multiprocessors = 132,
    .clock_khz = 1980000,
    .memory_clock_khz = 2619000,
    .memory_bus_bits = 5120,
    .l2_bytes = 50 * 1024 * 1024,
    .persisting_l2_max_bytes = 50 * 1024 * 1024 / 4 * 3,
    .global_memory_bytes = 81559 * kMiB,
    .pci_device_id = 0x2330,
};

// B200 (compute capability 10.0, 148 SMs).
constexpr GpuModel kB200{
    .name = "NVIDIA B200",
    .target = "sm_100a",
    .major = 10,
    .minor = 0,
    .multiprocessors = 148,
    .clock_khz = 1965000,
    .memory_clock_khz = 3996000,
    .memory_bus_bits = 8192,
    .l2_bytes = 126 * 1024 * 1024,
    .persisting_l2_max_bytes = 126 * 1024 * 1024 / 4 * 3,
    .global_memory_bytes = 183359 * kMiB,
    .pci_device_id = 0x2901,
};

}  // namespace

const GpuModel& gpu_model_for(const std::string& target) { return target == "sm_100a" ? kB200 : kH100; }

const GpuModel& current_gpu() { return gpu_model_for(Registry::get().target()); }

}  // namespace kgen::emu
