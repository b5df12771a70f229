#include "registry.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace kgen::emu {
namespace {

constexpr const char* kSupportedTargets[] = {"sm_90a", "sm_100a"};

bool supported_target(std::string_view target) {
  for (const char* known : kSupportedTargets)
    if (target == known) return true;
  return false;
}

std::string program_path() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "program";
  return std::string(path, static_cast<size_t>(length));
}

std::string describe_arches(const char* what, const std::vector<uint32_t>& arches) {
  std::string text;
  for (uint32_t arch : arches) text += std::string(text.empty() ? "" : ", ") + what + " " + std::to_string(arch);
  return text;
}

// What a module carries, for the report when it has nothing for the emulated GPU.
std::string describe_contents(const FatbinContents& contents) {
  std::string text;
  auto add = [&](const std::string& part) {
    if (!part.empty()) text += (text.empty() ? "" : "; ") + part;
  };
  for (const PtxImage& image : contents.ptx) add("PTX for " + (image.target.empty() ? "an unnamed target" : image.target));
  add(describe_arches("zstd-compressed PTX for arch", contents.compressed_ptx_arches));
  add(describe_arches("SASS cubin for arch", contents.cubin_arches));
  return text.empty() ? "nothing" : text;
}

std::string origin_of(const RegisteredModule& module) {
  std::string origin = program_path() + ": fat binary #" + std::to_string(module.index);
  if (!module.kernels.empty()) {
    origin += " (kernel " + module.kernels.front()->name;
    if (module.kernels.size() > 1) origin += " and " + std::to_string(module.kernels.size() - 1) + " more";
    origin += ")";
  }
  return origin;
}

}  // namespace

Registry& Registry::get() {
  // Never destroyed: stubs unregister from atexit handlers, whose order against static
  // destructors is not worth depending on.
  static Registry* registry = new Registry;
  return *registry;
}

RegisteredModule* Registry::module_of(void** handle) {
  for (auto& module : modules_)
    if (&module->handle_slot == handle) return module.get();
  return nullptr;
}

void** Registry::add_module(FatbinContents contents) {
  std::lock_guard lock(mutex_);
  auto module = std::make_unique<RegisteredModule>();
  module->index = registered_count_++;
  module->contents = std::move(contents);
  modules_.push_back(std::move(module));
  return &modules_.back()->handle_slot;
}

void** Registry::add_fatbin(const void* wrapper) {
  FatbinContents contents;
  std::string problem;
  try {
    contents = read_fatbin_wrapper(wrapper);
  } catch (const FatbinError& error) {
    problem = error.what();
  }
  void** handle = add_module(std::move(contents));
  std::lock_guard lock(mutex_);
  module_of(handle)->registration_problem = problem;
  return handle;
}

void Registry::add_function(void** handle, const void* host_function, const char* device_name) {
  std::lock_guard lock(mutex_);
  RegisteredModule* module = module_of(handle);
  auto kernel = std::make_unique<RegisteredKernel>();
  kernel->host_function = host_function;
  kernel->name = device_name ? device_name : "";
  kernel->module = module;
  if (module) module->kernels.push_back(kernel.get());
  kernels_.push_back(std::move(kernel));
}

void Registry::add_variable(void** handle, const void* host_shadow, const char* device_name, size_t bytes,
                            bool constant) {
  std::lock_guard lock(mutex_);
  if (RegisteredModule* module = module_of(handle))
    module->variables.push_back({host_shadow, device_name ? device_name : "", bytes, constant});
}

void Registry::remove_fatbin(void**) {
  // Nothing to undo: the stubs unregister at exit, and the Device has no unload; the kernels
  // stay registered until the process ends.
}

RegisteredKernel* Registry::find_kernel(const void* host_function) {
  std::lock_guard lock(mutex_);
  for (auto& kernel : kernels_)
    if (kernel->host_function == host_function) return kernel.get();
  return nullptr;
}

RegisteredKernel* Registry::find_kernel_by_handle(const void* handle) {
  std::lock_guard lock(mutex_);
  for (auto& kernel : kernels_)
    if (kernel.get() == handle) return kernel.get();
  return nullptr;
}

std::string Registry::target() {
  std::lock_guard lock(mutex_);
  if (!target_.empty()) return target_;
  if (const char* forced = std::getenv("KGEN_EMU_ARCH"); forced && *forced) {
    if (supported_target(forced)) {
      target_ = forced;
      return target_;
    }
    std::fprintf(stderr, "ptxemu: KGEN_EMU_ARCH=%s is not an emulated GPU (sm_90a or sm_100a); ignoring it\n", forced);
  }
  for (const char* candidate : kSupportedTargets)
    for (auto& module : modules_)
      for (const PtxImage& image : module->contents.ptx)
        if (image.target == candidate) return target_ = candidate;
  return target_ = kSupportedTargets[0];
}

std::vector<std::string> Registry::load_modules() {
  std::string gpu = target();
  std::lock_guard lock(mutex_);
  std::vector<std::string> reports;
  for (auto& module : modules_) {
    if (module->load_attempted) continue;
    module->load_attempted = true;
    // A module without kernels (every .cu file nvcc compiles registers one) has nothing to run.
    if (module->kernels.empty()) continue;
    std::string origin = origin_of(*module);
    if (!module->registration_problem.empty()) {
      module->load_problem = module->registration_problem;
    } else {
      const PtxImage* chosen = nullptr;
      for (const PtxImage& image : module->contents.ptx)
        if (image.target == gpu) chosen = &image;
      if (chosen == nullptr) {
        module->load_problem = "it carries no uncompressed PTX for " + gpu + " (it has: " +
                               describe_contents(module->contents) +
                               "); build it with nvcc-emu, which embeds uncompressed PTX for compute_90a/compute_100a";
      } else {
        try {
          Device::get().load_ptx(chosen->text, origin);
          module->loaded = true;
        } catch (const std::exception& error) {
          module->load_problem = std::string("its PTX does not load: ") + error.what();
        }
      }
    }
    if (!module->loaded)
      reports.push_back("cannot load " + origin + ": " + module->load_problem);
  }
  return reports;
}

void Registry::reset_for_testing() {
  std::lock_guard lock(mutex_);
  modules_.clear();
  kernels_.clear();
  target_.clear();
}

}  // namespace kgen::emu
