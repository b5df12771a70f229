// One Clang pass (device or host) over one generated CUDA file: the facts the interface
// checks compare (entry points, their parameters and launch bounds, the shared memory the
// kernel uses, the launches and their shared-memory requests) and the findings of the rules
// that need no interface. Only code in the audited folder is examined: CUDA, CUTLASS and CuTe
// are system headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit.h"

namespace kgen::audit {

struct Location {
  std::string file;
  unsigned line = 0;
};

struct ParamFact {
  std::string name;
  std::string type;            // as written: "const Element *__restrict"
  std::string canonical_type;  // "const cutlass::bfloat16_t *__restrict"
  bool grid_constant = false;
  Location where;
};

struct KernelFact {
  std::string name;    // qualified, anonymous namespaces left out
  std::string family;  // kgen::<symbol>, or the outermost namespace
  Location where;
  bool is_template = false;
  std::vector<ParamFact> params;
  bool has_launch_bounds = false;
  std::optional<int64_t> max_threads, min_blocks, max_blocks;  // nullopt: absent or not constant
  bool launch_bounds_constant = true;
  // The largest type the extern __shared__ buffer is cast to, in this kernel or in a device
  // helper of the file (bytes, the type, where); `smem_unknown` when the buffer is used in a way
  // that does not say how many bytes are needed.
  std::optional<int64_t> smem_need;
  std::string smem_need_type;
  Location smem_need_where;
  std::optional<Location> smem_unknown;
};

struct LaunchFact {
  std::string kernel;  // qualified name of the launched entry point
  Location where;
  std::string how;     // "<<<>>>", "cudaLaunchKernel", "cudaLaunchKernelEx"
  // Each nullopt when not a compile-time constant, or not found.
  std::optional<Dim3> grid, block;
  std::optional<int64_t> smem_bytes;
};

struct SmemAttributeFact {
  std::string kernel;
  Location where;
  std::optional<int64_t> bytes;  // cudaFuncAttributeMaxDynamicSharedMemorySize's value
};

struct PassFacts {
  bool device = false;
  bool compiled = false;  // no errors: the facts below are complete
  std::vector<KernelFact> kernels;
  std::vector<LaunchFact> launches;
  std::vector<SmemAttributeFact> smem_attributes;
  std::vector<Finding> findings;  // compile errors, and the lint rules (device pass)
};

// Which code a pass examines: files directly in `folder` (the generated kernels) and files
// anywhere below `tree` (the runtime they include; empty for none).
struct AuditedCode {
  std::string folder;
  std::string tree;
};

// Runs `command` (a clang driver command line with --cuda-device-only or --cuda-host-only)
// and examines the audited code.
PassFacts run_clang_pass(const std::vector<std::string>& command, const AuditedCode& code, bool device);

}  // namespace kgen::audit
