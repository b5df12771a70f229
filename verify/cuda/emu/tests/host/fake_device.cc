#include "fake_device.h"

#include <cstring>
#include <regex>

namespace kgen::emu {

Device& Device::get() { return testing::fake_device(); }

namespace testing {

FakeDevice& fake_device() {
  static FakeDevice* device = new FakeDevice;
  return *device;
}

void* FakeDevice::allocate(size_t bytes) {
  auto* memory = new unsigned char[bytes];
  std::memset(memory, 0xFF, bytes);
  allocations_[memory] = bytes;
  return memory;
}

void FakeDevice::release(void* pointer) {
  auto found = allocations_.find(static_cast<unsigned char*>(pointer));
  if (found == allocations_.end()) throw EmulationError("release of an unknown pointer");
  delete[] found->first;
  allocations_.erase(found);
}

bool FakeDevice::contains(const void* pointer, size_t bytes) const {
  const auto* p = static_cast<const unsigned char*>(pointer);
  auto after = allocations_.upper_bound(p);
  if (after == allocations_.begin()) return false;
  auto block = std::prev(after);
  return p + bytes <= block->first + block->second;
}

// Reads what the tests need from nvcc's PTX: ".visible .entry NAME(" then ".param .TYPE NAME"
// or ".param .align N .b8 NAME[BYTES]" lines up to ")", then an optional ".maxntid X, Y, Z".
void FakeDevice::load_ptx(std::string ptx, std::string origin) {
  origins.push_back(origin);
  std::string target;
  std::smatch match;
  if (std::regex_search(ptx, match, std::regex(R"(\.target\s+(\w+))"))) target = match[1];
  std::regex entry(R"(\.entry\s+(\w+)\s*\(([^)]*)\)([^{]*))");
  std::regex param(R"(\.param\s+(?:\.align\s+(\d+)\s+)?\.([a-z]+)(\d+)\s+\w+(?:\[(\d+)\])?)");
  std::regex maxntid(R"(\.maxntid\s+(\d+),\s*(\d+),\s*(\d+))");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
    KernelInfo info;
    info.name = (*it)[1];
    info.target = target;
    std::string params = (*it)[2];
    for (auto p = std::sregex_iterator(params.begin(), params.end(), param); p != std::sregex_iterator(); ++p) {
      uint32_t element = std::stoul((*p)[3]) / 8;
      uint32_t count = (*p)[4].matched ? std::stoul((*p)[4]) : 1;
      info.param_sizes.push_back(element * count);
      info.param_aligns.push_back((*p)[1].matched ? std::stoul((*p)[1]) : element);
    }
    std::string tail = (*it)[3];
    std::smatch bounds;
    if (std::regex_search(tail, bounds, maxntid))
      info.max_threads = {uint32_t(std::stoul(bounds[1])), uint32_t(std::stoul(bounds[2])), uint32_t(std::stoul(bounds[3]))};
    kernels_[info.name] = info;
  }
  // Static shared memory of the module, credited to every kernel (enough for the tests).
  std::regex shared(R"(\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\])");
  uint32_t shared_bytes = 0;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), shared); it != std::sregex_iterator(); ++it)
    shared_bytes += std::stoul((*it)[1]);
  for (auto& [name, info] : kernels_) info.static_shared_bytes = shared_bytes;
}

int FakeDevice::decode_all(std::string_view) { return static_cast<int>(kernels_.size()); }

const KernelInfo* FakeDevice::kernel(std::string_view name) const {
  auto found = kernels_.find(name);
  return found == kernels_.end() ? nullptr : &found->second;
}

LaunchStats FakeDevice::launch(std::string_view name, Dim3 grid, Dim3 block, uint32_t dynamic_shared_bytes,
                               void** args, Dim3 cluster, bool explicit_cluster) {
  if (!throw_on_launch.empty()) throw EmulationError(throw_on_launch);
  const KernelInfo* info = kernel(name);
  RecordedLaunch record{std::string(name), grid, block, dynamic_shared_bytes, {}, cluster, explicit_cluster};
  for (size_t i = 0; i < info->param_sizes.size(); ++i) {
    const auto* bytes = static_cast<const unsigned char*>(args[i]);
    record.args.emplace_back(bytes, bytes + info->param_sizes[i]);
  }
  launches.push_back(record);
  LaunchStats stats;
  stats.ctas_in_grid = stats.ctas_run = grid.count();
  return stats;
}

}  // namespace testing
}  // namespace kgen::emu
