// kgen-audit: every generated CUDA kernel file parsed with Clang (LibTooling, CUDA mode,
// device and host pass) and checked against the interface its MANIFEST.json promises, plus
// lint rules for slow or unsafe device code. docs/audit.md describes the rules and the
// interface format.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgen::audit {

// One violation: `file:line: [rule] message`. `file` is the path the audit was given
// (DIR/<name>/<file>), or the header or MANIFEST.json it found the problem in.
struct Finding {
  std::string file;
  unsigned line = 0;
  std::string rule;
  std::string message;
  std::string str() const;
  bool operator<(const Finding& other) const;
  bool operator==(const Finding& other) const;
};

// The rule identifiers, as findings name them (docs/audit.md, "Rules").
namespace rule {
inline constexpr const char* kManifest = "manifest";
inline constexpr const char* kInterface = "interface";
inline constexpr const char* kCompileError = "compile-error";
inline constexpr const char* kEntryPoints = "entry-points";
inline constexpr const char* kKernelParams = "kernel-params";
inline constexpr const char* kLaunchBounds = "launch-bounds";
inline constexpr const char* kDynamicSmem = "dynamic-smem";
inline constexpr const char* kLaunchMissing = "launch-missing";
inline constexpr const char* kLaunchNotConstant = "launch-not-constant";
inline constexpr const char* kLaunchGrid = "launch-grid";
inline constexpr const char* kLaunchThreads = "launch-threads";
inline constexpr const char* kLaunchSmem = "launch-smem";
inline constexpr const char* kKernelNamespace = "kernel-namespace";
inline constexpr const char* kKernelFamilies = "kernel-families";
inline constexpr const char* kLocalArrayIndex = "local-array-dynamic-index";
inline constexpr const char* kDoubleArithmetic = "double-arithmetic";
inline constexpr const char* kDoubleMathCall = "double-math-call";
inline constexpr const char* kDevicePrintf = "device-printf";
inline constexpr const char* kDeviceMalloc = "device-malloc";
inline constexpr const char* kDeviceNew = "device-new";
inline constexpr const char* kRestrictPointer = "restrict-pointer";
}  // namespace rule

// ---- The interface a CUDA kernel file promises (the "interface" object of its MANIFEST.json
// entry; docs/audit.md, "The interface").
struct ParamSpec {
  std::string name;
  std::string type;                    // compared ignoring whitespace; __restrict__ == __restrict
  std::optional<bool> grid_constant;   // checked when given
};

struct LaunchBoundsSpec {
  int64_t max_threads = 0;
  std::optional<int64_t> min_blocks;   // absent: the kernel's __launch_bounds__ has none
  std::optional<int64_t> max_blocks;
};

using Dim3 = std::array<int64_t, 3>;  // x, y, z of a dim3

// The launch the kernel is designed for; its dynamic shared memory is the entry point's
// dynamic_smem_bytes.
struct LaunchSpec {
  Dim3 grid{};
  Dim3 block{};
};

struct EntryPointSpec {
  std::string name;  // qualified, anonymous namespaces left out: kgen::<symbol>::forward_kernel
  std::vector<ParamSpec> params;
  LaunchBoundsSpec launch_bounds;
  LaunchSpec launch;
  int64_t dynamic_smem_bytes = 0;  // what the launcher requests and the kernel may use
};

struct KernelInterface {
  std::vector<EntryPointSpec> entry_points;
};

// Throws std::runtime_error naming the JSON path of the first problem ("interface.entry_points[0].params").
KernelInterface parse_interface(const nlohmann::json& interface);

// ---- How Clang is run.
struct Toolchain {
  std::string clang;            // the driver's argv[0]; Clang's resource dir is found from it
  std::string resource_dir;     // passed as -resource-dir when not empty
  std::string cuda_path;        // --cuda-path
  std::string cutlass_include;  // CUTLASS/CuTe headers (-isystem)
  std::string runtime_include;  // kgen's runtime headers (runtime/, -I): the sm90a kernels include them
  std::vector<std::string> extra_args;
  std::string pch_dir;          // where the prelude PCHs are kept (prelude_pch.h); empty: none
};
Toolchain default_toolchain();  // the paths this build was configured with
// The driver command line of one pass (device: true for --cuda-device-only), for reports.
std::vector<std::string> clang_command(const Toolchain& tools, const std::string& file,
                                       const std::string& target, bool device);

struct CudaKernelFile {
  std::string path;    // the .cu to parse
  std::string target;  // sm90a or sm100a
  std::string spec_name;
  std::string symbol;  // MANIFEST.json's symbol: <spec_name>_<target>[_<pass>]
  std::optional<KernelInterface> interface;  // nullopt: only the lint rules and names are checked
  std::string pass = "";  // "" for a forward kernel, else its pass (docs/naming.md)
};

struct PassTimes {
  double device_seconds = 0;
  double host_seconds = 0;
};

// Parse results kept by one process, keyed by the Clang command lines and the content of
// every file in the kernel's folder: auditing the same code again (with another manifest)
// does not parse it again. For tests and tools that audit many manifest variants.
class ParseCache {
 public:
  ParseCache();
  ~ParseCache();
  ParseCache(const ParseCache&) = delete;
  ParseCache& operator=(const ParseCache&) = delete;
  int parses() const;  // how many files were parsed (cache misses)
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// Parses `file` twice (CUDA device pass, host pass) and returns its findings, sorted and
// deduplicated (a finding seen by both passes is reported once). `observed`, when given,
// receives the interface the file actually has, in the format of docs/audit.md (null when
// the file does not compile): what `kgen-audit --print-interface` shows.
std::vector<Finding> audit_cuda_file(const CudaKernelFile& file, const Toolchain& tools,
                                     PassTimes* times = nullptr, nlohmann::json* observed = nullptr,
                                     ParseCache* cache = nullptr);

struct AuditedFile {
  std::string path;
  std::string target;
  PassTimes times;
  nlohmann::json observed;  // the interface found in the file (audit_cuda_file's `observed`)
};

struct AuditReport {
  std::vector<Finding> findings;
  std::vector<AuditedFile> audited;  // the kernel files parsed
  std::vector<std::string> without_interface;  // audited files whose entry has no "interface"
};

// Audits DIR/<spec_name>/: reads MANIFEST.json and audits each file with role "kernel" and
// target sm90a or sm100a. A missing or malformed manifest or interface is a finding.
AuditReport audit_generated(const std::string& generated_dir, const std::string& spec_name,
                            const Toolchain& tools, ParseCache* cache = nullptr);

}  // namespace kgen::audit
