// What nvcc's host stubs register before main: fat binaries (modules), the kernels of each
// (host stub address -> mangled device name) and device variables. The PTX of a module is
// handed to the Device lazily, on the first call that needs a kernel, once every static
// constructor has registered its module and the emulated GPU (sm_90a H100 or sm_100a B200) is
// decided.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../core/device.h"
#include "fatbin.h"

namespace kgen::emu {

struct RegisteredModule;

// A kernel as the host sees it, with the function attributes programs set on it.
struct RegisteredKernel {
  const void* host_function = nullptr;  // the address programs launch by (the stub)
  std::string name;                     // mangled, as in the PTX
  RegisteredModule* module = nullptr;
  // cudaFuncSetAttribute's values.
  int max_dynamic_shared_bytes = 48 * 1024;
  int preferred_shared_carveout = -1;
  int non_portable_cluster_size_allowed = 0;
  int cluster_scheduling_policy = 0;
};

struct RegisteredVariable {
  const void* host_shadow = nullptr;
  std::string name;
  size_t bytes = 0;
  bool constant = false;
};

struct RegisteredModule {
  int index = 0;                     // order of registration, for reports
  FatbinContents contents;
  std::string registration_problem;  // why its fat binary could not be read
  bool load_attempted = false;
  bool loaded = false;
  std::string load_problem;          // why its PTX is not in the Device
  std::vector<RegisteredKernel*> kernels;
  std::vector<RegisteredVariable> variables;
  void* handle_slot = nullptr;       // its address is the handle nvcc's stubs hold
};

class Registry {
 public:
  static Registry& get();

  // The registration entry points' work (see registration_abi.cc).
  void** add_fatbin(const void* wrapper);
  void add_function(void** handle, const void* host_function, const char* device_name);
  void add_variable(void** handle, const void* host_shadow, const char* device_name, size_t bytes, bool constant);
  void remove_fatbin(void** handle);

  // A module from a fat binary already read (tests use it with hand-made PTX).
  void** add_module(FatbinContents contents);

  RegisteredKernel* find_kernel(const void* host_function);
  RegisteredKernel* find_kernel_by_handle(const void* handle);

  // "sm_90a" or "sm_100a": the architecture of the emulated GPU. Decided on the first call:
  // KGEN_EMU_ARCH when set, otherwise sm_90a when a registered module carries sm_90a PTX,
  // otherwise sm_100a when one carries sm_100a PTX, otherwise sm_90a.
  std::string target();

  // Loads every module not yet tried into the Device. Returns the reports of modules that
  // failed to load just now (each one once); the caller reports them as findings.
  std::vector<std::string> load_modules();

  // For tests: forgets every module (the stubs' handles become dangling) and the target.
  void reset_for_testing();

 private:
  RegisteredModule* module_of(void** handle);

  std::recursive_mutex mutex_;
  std::vector<std::unique_ptr<RegisteredModule>> modules_;
  std::vector<std::unique_ptr<RegisteredKernel>> kernels_;
  std::string target_;
  int registered_count_ = 0;
};

}  // namespace kgen::emu
