// The GPU the runtime stand-in reports: an H100 SXM5 when the program's PTX targets sm_90a, a
// B200 for sm_100a (Registry::target decides). Only facts programs query live here; every
// number is the real part's, so that host code sizes grids and shared memory as it would on
// the hardware.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kgen::emu {

struct GpuModel {
  const char* name;
  const char* target;  // "sm_90a"
  int major, minor;
  int multiprocessors;
  int clock_khz;         // boost clock
  int memory_clock_khz;
  int memory_bus_bits;
  int l2_bytes;
  int persisting_l2_max_bytes;
  size_t global_memory_bytes;
  int pci_device_id;     // the product's PCI device id (vendor 0x10de)
  // Shared by Hopper and Blackwell datacenter parts:
  static constexpr int kSharedPerBlock = 48 * 1024;
  static constexpr int kSharedPerBlockOptin = 232448;        // 227 KiB
  static constexpr int kSharedPerMultiprocessor = 233472;    // 228 KiB
  static constexpr int kReservedSharedPerBlock = 1024;
  static constexpr int kRegistersPerBlock = 65536;
  static constexpr int kRegistersPerMultiprocessor = 65536;
  static constexpr int kMaxThreadsPerBlock = 1024;
  static constexpr int kMaxBlockDim[3] = {1024, 1024, 64};
  static constexpr int kMaxGridDim[3] = {2147483647, 65535, 65535};
  static constexpr int kMaxThreadsPerMultiprocessor = 2048;
  static constexpr int kMaxBlocksPerMultiprocessor = 32;
  static constexpr int kWarpSize = 32;
  static constexpr int kConstantMemory = 65536;
  static constexpr int kMaxPortableClusterSize = 8;
};

// The model for an emulated target ("sm_90a" or "sm_100a").
const GpuModel& gpu_model_for(const std::string& target);

// The model of this process's GPU (decided from the registered modules on first use).
const GpuModel& current_gpu();

}  // namespace kgen::emu
