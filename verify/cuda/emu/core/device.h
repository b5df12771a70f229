// The emulated GPU as the host side sees it: global memory, modules of PTX text, kernel
// launches. The CUDA runtime stand-in (host/) is written on this and nothing else.
//
// Device addresses are host addresses: allocate() returns host memory the emulator knows the
// bounds of, so cudaMemcpy in any direction is a memcpy of checked ranges, and every global
// access a kernel makes is checked against the allocation table (an access outside every
// allocation is a finding, not a crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::emu {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// What the emulator found wrong (a kernel bug, a bad launch, an unsupported instruction):
// the message names kernel, CTA, warp, PC, PTX line, address and operation where they apply.
class EmulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel's interface as its PTX declares it.
struct KernelInfo {
  std::string name;                 // mangled, as in the PTX and in __cudaRegisterFunction
  std::vector<uint32_t> param_sizes;  // bytes of each .param, in order
  std::vector<uint32_t> param_aligns;
  Dim3 max_threads{0, 0, 0};        // .maxntid (0: none declared)
  uint32_t static_shared_bytes = 0;  // .shared variables of the kernel's module, not .extern
  std::string target;               // "sm_90a", "sm_100a"
  Dim3 required_cluster{0, 0, 0};   // .reqnctapercluster (__cluster_dims__); 0: none declared
  bool explicit_cluster = false;    // .explicitcluster: the kernel must run in a cluster
};

// Counters of one launch (docs: thread-instructions per second).
struct LaunchStats {
  uint64_t ctas_run = 0;
  uint64_t ctas_in_grid = 0;
  uint64_t warp_instructions = 0;
  uint64_t thread_instructions = 0;
  double seconds = 0;
};

// How a launch is emulated; read from the environment by Device::get() (docs/cuda-emulation.md):
//   KGEN_EMU_SEED          scheduler, async-completion and approximation seed
//   KGEN_EMU_CTAS          a sample of CTAs: "[KERNEL:]x=A-B[,y=A-B][,z=A-B];...", each entry the
//                          CTAs whose indices lie in the ranges, for kernels whose name contains
//                          KERNEL (the first matching entry applies; no entry: the whole grid)
//   KGEN_EMU_STATS         a file each launch appends one JSON line of LaunchStats to
//   KGEN_EMU_PTX           a PTX file that replaces any loaded module defining one of its
//                          kernels (how planted defects and mutants run in unmodified programs)
//   KGEN_EMU_DUMP_PTX      a folder each loaded module's PTX is written to (<kernel>.ptx)
//   KGEN_EMU_MAX_INSTRUCTIONS  warp instructions one launch may execute (a runaway loop is a
//                          finding, not a hang); default 4e9
struct CtaFilter {
  std::string kernel;  // a part of the kernel's name ("" matches every kernel)
  struct Range {
    uint32_t lo = 0, hi = ~0u;
  } x, y, z;
  bool contains(Dim3 c) const {
    return c.x >= x.lo && c.x <= x.hi && c.y >= y.lo && c.y <= y.hi && c.z >= z.lo && c.z <= z.hi;
  }
};

struct Options {
  uint64_t seed = 1;
  std::vector<CtaFilter> ctas;
  std::string stats_path;
  std::string replacement_ptx;
  std::string dump_folder;
  uint64_t max_instructions = 4000000000ull;
};

class Device {
 public:
  // The process's one emulated GPU.
  static Device& get();

  virtual ~Device() = default;
  virtual Options& options() = 0;

  // Global memory. New allocations are filled with 0xFF bytes (NaN for every float type), so
  // a kernel reading what nobody wrote sees NaN rather than zeros.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* pointer) = 0;  // throws for a pointer allocate() did not return
  // True when [pointer, pointer + bytes) lies inside one live allocation.
  virtual bool contains(const void* pointer, size_t bytes) const = 0;

  // Parses a module (throws EmulationError naming the PTX line of a parse error) and makes
  // its kernels launchable. `origin` names it in reports.
  virtual void load_ptx(std::string ptx, std::string origin) = 0;
  // Decodes every kernel of the module loaded as `origin` (what a launch does first); throws
  // for an instruction ptxemu does not implement. Returns the number of kernels.
  virtual int decode_all(std::string_view origin) = 0;
  // nullptr when no loaded module has the kernel.
  virtual const KernelInfo* kernel(std::string_view name) const = 0;

  // Runs the kernel to completion on the CPU. `args[i]` points at the bytes of parameter i
  // (param_sizes[i] of them), as cudaLaunchKernel's args do. Throws EmulationError for a
  // finding; the caller turns it into a CUDA error.
  // `cluster`: the thread-block cluster shape (grid must be a multiple of it). The CTAs of one
  // cluster run together under one scheduler, each with its own shared memory; a launch whose
  // cluster is {1,1,1} and whose kernel declares .reqnctapercluster runs with the declared shape.
  // `explicit_cluster`: the launch asked for clusters (cudaLaunchAttributeClusterDimension), what
  // %is_explicit_cluster reports.
  virtual LaunchStats launch(std::string_view kernel, Dim3 grid, Dim3 block, uint32_t dynamic_shared_bytes,
                             void** args, Dim3 cluster = {1, 1, 1}, bool explicit_cluster = false) = 0;
};

}  // namespace kgen::emu
