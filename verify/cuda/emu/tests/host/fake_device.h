// A stand-in for the emulator core in the host tests: real allocations with bounds, a tiny
// reader of PTX kernel interfaces (names, parameter sizes, .maxntid, .shared bytes) and
// launches that record their arguments' bytes instead of running anything.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../../core/device.h"

namespace kgen::emu::testing {

struct RecordedLaunch {
  std::string kernel;
  Dim3 grid, block;
  uint32_t dynamic_shared_bytes = 0;
  std::vector<std::vector<unsigned char>> args;  // each parameter's bytes
  Dim3 cluster;
  bool explicit_cluster = false;
};

class FakeDevice : public Device {
 public:
  Options& options() override { return options_; }
  void* allocate(size_t bytes) override;
  void release(void* pointer) override;
  bool contains(const void* pointer, size_t bytes) const override;
  void load_ptx(std::string ptx, std::string origin) override;
  int decode_all(std::string_view origin) override;
  const KernelInfo* kernel(std::string_view name) const override;
  LaunchStats launch(std::string_view kernel, Dim3 grid, Dim3 block, uint32_t dynamic_shared_bytes,
                     void** args, Dim3 cluster, bool explicit_cluster) override;

  std::vector<RecordedLaunch> launches;
  std::vector<std::string> origins;
  std::string throw_on_launch;  // when set, launch throws EmulationError with this text

 private:
  Options options_;
  std::map<const unsigned char*, size_t> allocations_;
  std::map<std::string, KernelInfo, std::less<>> kernels_;
};

FakeDevice& fake_device();

}  // namespace kgen::emu::testing
