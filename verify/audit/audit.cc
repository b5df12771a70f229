#include "audit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "clang_pass.h"
#include "kernel_names.h"
#include "prelude_pch.h"
#include "targets/target.h"

#ifndef KGEN_AUDIT_CLANG
#error "the build defines KGEN_AUDIT_CLANG, KGEN_AUDIT_RESOURCE_DIR, KGEN_AUDIT_CUDA_PATH, KGEN_AUDIT_CUTLASS_INCLUDE, KGEN_AUDIT_RUNTIME_INCLUDE"
#endif

namespace kgen::audit {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// ---- The interface JSON

[[noreturn]] void bad(const std::string& path, const std::string& expected) {
  throw std::runtime_error(path + ": expected " + expected);
}

void only_keys(const Json& object, const std::string& path, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : object.items())
    if (!allowed.count(key)) throw std::runtime_error(path + ": unknown key \"" + key + "\"");
}

const Json& member(const Json& object, const std::string& path, const std::string& key) {
  if (!object.contains(key)) throw std::runtime_error(path + ": missing key \"" + key + "\"");
  return object.at(key);
}

std::string string_at(const Json& object, const std::string& path, const std::string& key) {
  const Json& value = member(object, path, key);
  if (!value.is_string() || value.get<std::string>().empty()) bad(path + "." + key, "a non-empty string");
  return value.get<std::string>();
}

int64_t count_at(const Json& object, const std::string& path, const std::string& key, int64_t minimum) {
  const Json& value = member(object, path, key);
  if (!value.is_number_integer() || value.get<int64_t>() < minimum)
    bad(path + "." + key, "an integer >= " + std::to_string(minimum));
  return value.get<int64_t>();
}

Dim3 dim3_at(const Json& object, const std::string& path, const std::string& key) {
  const Json& value = member(object, path, key);
  auto positive = [](const Json& n) { return n.is_number_integer() && n.get<int64_t>() >= 1; };
  if (!value.is_array() || value.size() != 3 || !std::all_of(value.begin(), value.end(), positive))
    bad(path + "." + key, "[x, y, z], three integers >= 1");
  return {value[0].get<int64_t>(), value[1].get<int64_t>(), value[2].get<int64_t>()};
}

// ---- Comparisons

// Types compare without whitespace, __restrict__ and __restrict being the same qualifier, and
// with the cv-qualifiers of the pointee in front ("Params const" == "const Params").
std::string normal_type(const std::string& type) {
  const std::size_t declarator = std::min(type.find_first_of("*&"), type.size());
  std::istringstream head(type.substr(0, declarator));
  bool is_const = false, is_volatile = false;
  std::string word, rest;
  while (head >> word) {
    if (word == "const") is_const = true;
    else if (word == "volatile") is_volatile = true;
    else rest += word + " ";
  }
  const std::string spaced = std::string(is_const ? "const " : "") + (is_volatile ? "volatile " : "") + rest +
                             type.substr(declarator);
  std::string out;
  for (char c : spaced)
    if (c != ' ' && c != '\t' && c != '\n') out += c;
  for (std::size_t at; (at = out.find("__restrict__")) != std::string::npos;) out.replace(at, 12, "__restrict");
  return out;
}

std::string describe_bounds(const LaunchBoundsSpec& bounds) {
  std::string text = "__launch_bounds__(" + std::to_string(bounds.max_threads);
  if (bounds.min_blocks) text += ", " + std::to_string(*bounds.min_blocks);
  if (bounds.max_blocks) text += ", " + std::to_string(*bounds.max_blocks);
  return text + ")";
}

std::string describe_bounds(const KernelFact& kernel) {
  auto value = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("?"); };
  std::string text = "__launch_bounds__(" + value(kernel.max_threads);
  if (kernel.min_blocks || kernel.max_blocks) text += ", " + value(kernel.min_blocks);
  if (kernel.max_blocks) text += ", " + value(kernel.max_blocks);
  return text + ")";
}

std::string describe(const Dim3& dims) {
  return "(" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " + std::to_string(dims[2]) + ")";
}

std::string join_names(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

constexpr int64_t kDefaultDynamicSmemLimit = 48 * 1024;  // above it, a kernel must opt in

struct Merged {
  std::vector<KernelFact> kernels;  // device pass first: it sees the kernels' bodies
  std::vector<LaunchFact> launches;
  std::vector<SmemAttributeFact> smem_attributes;
};

Merged merge(const PassFacts& device, const PassFacts& host) {
  Merged merged;
  std::set<std::string> names;
  for (const PassFacts* pass : {&device, &host})
    for (const KernelFact& kernel : pass->kernels)
      if (names.insert(kernel.name).second) merged.kernels.push_back(kernel);
  std::sort(merged.kernels.begin(), merged.kernels.end(), [](const KernelFact& a, const KernelFact& b) {
    return std::tie(a.where.file, a.where.line, a.name) < std::tie(b.where.file, b.where.line, b.name);
  });
  // A launch is seen by both passes (host functions are parsed in both): keep one, with its
  // configuration.
  std::map<std::tuple<std::string, unsigned, std::string>, LaunchFact> launches;
  for (const PassFacts* pass : {&host, &device}) {
    for (const LaunchFact& launch : pass->launches) {
      auto [it, fresh] = launches.try_emplace({launch.where.file, launch.where.line, launch.kernel}, launch);
      if (fresh) continue;
      if (!it->second.grid) it->second.grid = launch.grid;
      if (!it->second.block) it->second.block = launch.block;
      if (!it->second.smem_bytes) it->second.smem_bytes = launch.smem_bytes;
    }
  }
  for (auto& [key, launch] : launches) merged.launches.push_back(launch);
  for (const PassFacts* pass : {&host, &device})
    merged.smem_attributes.insert(merged.smem_attributes.end(), pass->smem_attributes.begin(),
                                  pass->smem_attributes.end());
  return merged;
}

void check_names(const CudaKernelFile& file, const Merged& merged, std::vector<Finding>& findings) {
  const std::string expected = kernel_namespace(file.spec_name, file.target, file.pass);
  std::vector<std::string> families;
  std::map<std::string, const KernelFact*> first_of_family;
  for (const KernelFact& kernel : merged.kernels) {
    if (kernel.family != expected)
      findings.push_back({kernel.where.file, kernel.where.line, rule::kKernelNamespace,
                          "entry point '" + kernel.name + "' is not in namespace " + expected +
                              ", the namespace of " + file.spec_name + "'s " + file.target +
                              (file.pass.empty() ? "" : " " + file.pass) +
                              " kernels (docs/naming.md)"});
    if (first_of_family.emplace(kernel.family, &kernel).second) families.push_back(kernel.family);
  }
  if (families.size() <= 1) return;
  const KernelFact& first = *first_of_family.at(families.front());
  for (std::size_t k = 1; k < families.size(); ++k) {
    const KernelFact& kernel = *first_of_family.at(families[k]);
    findings.push_back({kernel.where.file, kernel.where.line, rule::kKernelFamilies,
                        "entry point '" + kernel.name + "' belongs to kernel family " + families[k] +
                            ", but this file already defines family " + families.front() + " ('" + first.name +
                            "', line " + std::to_string(first.where.line) + "): one kernel family per file"});
  }
}

void check_params(const EntryPointSpec& spec, const KernelFact& kernel, std::vector<Finding>& findings) {
  if (kernel.params.size() != spec.params.size())
    findings.push_back({kernel.where.file, kernel.where.line, rule::kKernelParams,
                        "'" + kernel.name + "' has " + std::to_string(kernel.params.size()) +
                            " parameter(s); the interface lists " + std::to_string(spec.params.size())});
  for (std::size_t k = 0; k < std::min(kernel.params.size(), spec.params.size()); ++k) {
    const ParamFact& param = kernel.params[k];
    const ParamSpec& want = spec.params[k];
    const std::string which = "parameter " + std::to_string(k + 1) + " of '" + kernel.name + "'";
    if (param.name != want.name)
      findings.push_back({param.where.file, param.where.line, rule::kKernelParams,
                          which + " is named '" + param.name + "'; the interface says '" + want.name + "'"});
    const std::string type = normal_type(want.type);
    if (type != normal_type(param.type) && type != normal_type(param.canonical_type))
      findings.push_back({param.where.file, param.where.line, rule::kKernelParams,
                          which + " ('" + param.name + "') has type '" + param.type + "'; the interface says '" +
                              want.type + "'"});
    if (want.grid_constant && *want.grid_constant != param.grid_constant)
      findings.push_back({param.where.file, param.where.line, rule::kKernelParams,
                          which + " ('" + param.name + "') is " + (param.grid_constant ? "" : "not ") +
                              "__grid_constant__; the interface says it is " + (*want.grid_constant ? "" : "not")});
  }
}

void check_launch_bounds(const EntryPointSpec& spec, const KernelFact& kernel, std::vector<Finding>& findings) {
  const std::string want = describe_bounds(spec.launch_bounds);
  if (!kernel.has_launch_bounds) {
    findings.push_back({kernel.where.file, kernel.where.line, rule::kLaunchBounds,
                        "'" + kernel.name + "' has no __launch_bounds__; the interface says " + want});
    return;
  }
  if (kernel.is_template && !kernel.launch_bounds_constant) return;  // judged per instantiation by nvcc
  if (!kernel.launch_bounds_constant) {
    findings.push_back({kernel.where.file, kernel.where.line, rule::kLaunchBounds,
                        "the __launch_bounds__ of '" + kernel.name + "' are not compile-time constants"});
    return;
  }
  const LaunchBoundsSpec& bounds = spec.launch_bounds;
  if (kernel.max_threads != bounds.max_threads || kernel.min_blocks != bounds.min_blocks ||
      kernel.max_blocks != bounds.max_blocks)
    findings.push_back({kernel.where.file, kernel.where.line, rule::kLaunchBounds,
                        "'" + kernel.name + "' has " + describe_bounds(kernel) + "; the interface says " + want});
}

// The kernel's side of dynamic shared memory: what it uses fits the interface's budget.
void check_shared_memory(const EntryPointSpec& spec, const KernelFact& kernel, std::vector<Finding>& findings) {
  const int64_t declared = spec.dynamic_smem_bytes;
  const std::string bytes = std::to_string(declared);
  if (kernel.smem_unknown) {
    findings.push_back({kernel.smem_unknown->file, kernel.smem_unknown->line, rule::kDynamicSmem,
                        "the extern __shared__ buffer is used other than through a cast to a storage type "
                        "(e.g. reinterpret_cast<SharedStorage*>(buffer)): the audit cannot tell how many "
                        "bytes '" + kernel.name + "' needs"});
  } else if (kernel.smem_need && *kernel.smem_need > declared) {
    findings.push_back({kernel.smem_need_where.file, kernel.smem_need_where.line, rule::kDynamicSmem,
                        "'" + kernel.name + "' needs sizeof(" + kernel.smem_need_type + ") = " +
                            std::to_string(*kernel.smem_need) +
                            " bytes of dynamic shared memory; the interface declares " + bytes});
  } else if (!kernel.smem_need && declared > 0) {
    findings.push_back({kernel.where.file, kernel.where.line, rule::kDynamicSmem,
                        "the interface declares " + bytes + " bytes of dynamic shared memory, but '" + kernel.name +
                            "' never uses an extern __shared__ buffer"});
  }
}

// The shared memory one launch requests: the interface's budget, at least what the kernel
// needs, and above 48 KiB only after the kernel opted in (else the launch fails).
void check_launch_smem(const EntryPointSpec& spec, const KernelFact& kernel, const LaunchFact& launch,
                       const std::string& how, const Merged& merged, std::vector<Finding>& findings) {
  auto report = [&](const std::string& message) {
    findings.push_back({launch.where.file, launch.where.line, rule::kLaunchSmem, message});
  };
  const int64_t requested = *launch.smem_bytes;
  const std::string requests = how + " requests " + std::to_string(requested) + " bytes of dynamic shared memory";
  if (requested != spec.dynamic_smem_bytes)
    report(requests + "; the interface declares " + std::to_string(spec.dynamic_smem_bytes));
  if (kernel.smem_need && requested < *kernel.smem_need)
    report(requests + ", but the kernel needs sizeof(" + kernel.smem_need_type + ") = " +
           std::to_string(*kernel.smem_need));
  if (requested <= kDefaultDynamicSmemLimit) return;
  std::optional<int64_t> raised;
  for (const SmemAttributeFact& attribute : merged.smem_attributes)
    if (attribute.kernel == kernel.name && attribute.bytes && (!raised || *attribute.bytes > *raised))
      raised = attribute.bytes;
  if (!raised || *raised < requested)
    report(requests + ", more than 48 KiB, but the file " +
           (raised ? "raises cudaFuncAttributeMaxDynamicSharedMemorySize only to " + std::to_string(*raised)
                   : std::string("never sets cudaFuncAttributeMaxDynamicSharedMemorySize for it")) +
           ": the launch would fail");
}

// One launch against the launch the interface describes: grid, threads per block, dynamic
// shared memory, each evaluated by Clang as a compile-time constant.
void check_launch(const EntryPointSpec& spec, const KernelFact& kernel, const LaunchFact& launch, const Merged& merged,
                  std::vector<Finding>& findings) {
  auto report = [&](const char* rule, const std::string& message) {
    findings.push_back({launch.where.file, launch.where.line, rule, message});
  };
  const std::string how = (launch.how == "<<<>>>" ? "the launch" : "the " + launch.how + " launch") + " of '" +
                          kernel.name + "'";
  const LaunchSpec& want = spec.launch;
  const int64_t want_threads = want.block[0] * want.block[1] * want.block[2];
  std::vector<std::string> unknown;
  if (!launch.grid) unknown.push_back("grid");
  if (!launch.block) unknown.push_back("block");
  if (!launch.smem_bytes) unknown.push_back("dynamic shared memory size");
  if (!unknown.empty())
    report(rule::kLaunchNotConstant,
           how + ": its " + join_names(unknown) + (unknown.size() == 1 ? " is" : " are") +
               " not a compile-time constant (or not found by the audit); the interface says grid " +
               describe(want.grid) + ", block " + describe(want.block) + ", " +
               std::to_string(spec.dynamic_smem_bytes) + " bytes");
  if (launch.grid && *launch.grid != want.grid)
    report(rule::kLaunchGrid, how + " has grid " + describe(*launch.grid) + "; the interface says " +
                                  describe(want.grid));
  if (launch.block && *launch.block != want.block) {
    const Dim3& block = *launch.block;
    report(rule::kLaunchThreads, how + " has block " + describe(block) + ", " +
                                     std::to_string(block[0] * block[1] * block[2]) +
                                     " threads; the interface says " + describe(want.block) + ", " +
                                     std::to_string(want_threads) + " threads, the kernel's design (" +
                                     describe_bounds(spec.launch_bounds) + ")");
  }
  if (launch.smem_bytes) check_launch_smem(spec, kernel, launch, how, merged, findings);
}

// Every launch of the entry point in the file, and the shared-memory size it opts in to.
void check_launches(const EntryPointSpec& spec, const KernelFact& kernel, const Merged& merged,
                    std::vector<Finding>& findings) {
  bool launched = false;
  for (const LaunchFact& launch : merged.launches) {
    if (launch.kernel != kernel.name) continue;
    launched = true;
    check_launch(spec, kernel, launch, merged, findings);
  }
  if (!launched)
    findings.push_back({kernel.where.file, kernel.where.line, rule::kLaunchMissing,
                        "no launch of '" + kernel.name + "' in this file (<<<>>>, cudaLaunchKernel or "
                        "cudaLaunchKernelEx): its grid, block and shared memory cannot be checked"});
  for (const SmemAttributeFact& attribute : merged.smem_attributes) {
    if (attribute.kernel != kernel.name) continue;
    const std::string what = "cudaFuncSetAttribute(" + kernel.name + ", cudaFuncAttributeMaxDynamicSharedMemorySize, ";
    if (!attribute.bytes)
      findings.push_back({attribute.where.file, attribute.where.line, rule::kLaunchNotConstant,
                          what + "n): n is not a compile-time constant; the interface declares " +
                              std::to_string(spec.dynamic_smem_bytes) + " bytes"});
    else if (*attribute.bytes != spec.dynamic_smem_bytes)
      findings.push_back({attribute.where.file, attribute.where.line, rule::kLaunchSmem,
                          what + std::to_string(*attribute.bytes) + "): the interface declares " +
                              std::to_string(spec.dynamic_smem_bytes) + " bytes"});
  }
}

void check_interface(const CudaKernelFile& file, const KernelInterface& interface, const Merged& merged,
                     std::vector<Finding>& findings) {
  std::vector<std::string> defined, promised;
  for (const KernelFact& kernel : merged.kernels) defined.push_back(kernel.name);
  for (const EntryPointSpec& spec : interface.entry_points) promised.push_back(spec.name);
  for (const EntryPointSpec& spec : interface.entry_points) {
    auto kernel = std::find_if(merged.kernels.begin(), merged.kernels.end(),
                               [&](const KernelFact& fact) { return fact.name == spec.name; });
    if (kernel == merged.kernels.end()) {
      findings.push_back({fs::path(file.path).lexically_normal().generic_string(), 1, rule::kEntryPoints,
                          "the interface's entry point '" + spec.name +
                              "' is not defined in this file (__global__ functions: " + join_names(defined) + ")"});
      continue;
    }
    check_params(spec, *kernel, findings);
    check_launch_bounds(spec, *kernel, findings);
    check_shared_memory(spec, *kernel, findings);
    check_launches(spec, *kernel, merged, findings);
  }
  for (const KernelFact& kernel : merged.kernels)
    if (std::find(promised.begin(), promised.end(), kernel.name) == promised.end())
      findings.push_back({kernel.where.file, kernel.where.line, rule::kEntryPoints,
                          "__global__ '" + kernel.name + "' is not an entry point of the interface in MANIFEST.json "
                          "(interface: " + join_names(promised) + ")"});
}

void sort_unique(std::vector<Finding>& findings) {
  std::sort(findings.begin(), findings.end());
  // Both passes see host functions and kernels: their findings agree. One double-precision
  // expression trips several nodes (the conversion, the operator): one finding per line.
  findings.erase(std::unique(findings.begin(), findings.end(),
                             [](const Finding& a, const Finding& b) {
                               return a.file == b.file && a.line == b.line && a.rule == b.rule &&
                                      (a.message == b.message || a.rule == rule::kDoubleArithmetic);
                             }),
                 findings.end());
}

std::string read_text(const fs::path& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The line of the first occurrence of `needle` at or after line `from`, else `from`.
unsigned line_of(const std::string& text, const std::string& needle, unsigned from = 1) {
  unsigned line = 1;
  std::size_t start = 0;
  while (line < from && start < text.size()) {
    const std::size_t next = text.find('\n', start);
    if (next == std::string::npos) break;
    start = next + 1;
    ++line;
  }
  const std::size_t at = text.find(needle, start);
  if (at == std::string::npos) return from;
  return line + static_cast<unsigned>(std::count(text.begin() + static_cast<std::ptrdiff_t>(start),
                                                 text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace

std::string Finding::str() const { return file + ":" + std::to_string(line) + ": [" + rule + "] " + message; }

bool Finding::operator<(const Finding& other) const {
  return std::tie(file, line, rule, message) < std::tie(other.file, other.line, other.rule, other.message);
}

bool Finding::operator==(const Finding& other) const {
  return std::tie(file, line, rule, message) == std::tie(other.file, other.line, other.rule, other.message);
}

KernelInterface parse_interface(const Json& json) {
  const std::string root = "interface";
  if (!json.is_object()) bad(root, "an object");
  only_keys(json, root, {"entry_points"});
  const Json& entries = member(json, root, "entry_points");
  if (!entries.is_array() || entries.empty()) bad(root + ".entry_points", "a non-empty array");
  KernelInterface interface;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const std::string path = root + ".entry_points[" + std::to_string(k) + "]";
    const Json& entry = entries[k];
    if (!entry.is_object()) bad(path, "an object");
    only_keys(entry, path, {"name", "params", "launch_bounds", "launch", "dynamic_smem_bytes"});
    EntryPointSpec spec;
    spec.name = string_at(entry, path, "name");
    const Json& params = member(entry, path, "params");
    if (!params.is_array()) bad(path + ".params", "an array");
    for (std::size_t p = 0; p < params.size(); ++p) {
      const std::string param_path = path + ".params[" + std::to_string(p) + "]";
      if (!params[p].is_object()) bad(param_path, "an object");
      only_keys(params[p], param_path, {"name", "type", "grid_constant"});
      ParamSpec param{string_at(params[p], param_path, "name"), string_at(params[p], param_path, "type"), {}};
      if (params[p].contains("grid_constant")) {
        if (!params[p]["grid_constant"].is_boolean()) bad(param_path + ".grid_constant", "true or false");
        param.grid_constant = params[p]["grid_constant"].get<bool>();
      }
      spec.params.push_back(param);
    }
    const Json& bounds = member(entry, path, "launch_bounds");
    const std::string bounds_path = path + ".launch_bounds";
    if (!bounds.is_object()) bad(bounds_path, "an object {\"max_threads\": N[, \"min_blocks\": M][, \"max_blocks\": C]}");
    only_keys(bounds, bounds_path, {"max_threads", "min_blocks", "max_blocks"});
    spec.launch_bounds.max_threads = count_at(bounds, bounds_path, "max_threads", 1);
    if (bounds.contains("min_blocks")) spec.launch_bounds.min_blocks = count_at(bounds, bounds_path, "min_blocks", 0);
    if (bounds.contains("max_blocks")) spec.launch_bounds.max_blocks = count_at(bounds, bounds_path, "max_blocks", 0);
    const Json& launch = member(entry, path, "launch");
    const std::string launch_path = path + ".launch";
    if (!launch.is_object()) bad(launch_path, "an object {\"grid\": [x, y, z], \"block\": [x, y, z]}");
    only_keys(launch, launch_path, {"grid", "block"});
    spec.launch.grid = dim3_at(launch, launch_path, "grid");
    spec.launch.block = dim3_at(launch, launch_path, "block");
    spec.dynamic_smem_bytes = count_at(entry, path, "dynamic_smem_bytes", 0);
    interface.entry_points.push_back(spec);
  }
  return interface;
}

Toolchain default_toolchain() {
  return Toolchain{KGEN_AUDIT_CLANG,           KGEN_AUDIT_RESOURCE_DIR,    KGEN_AUDIT_CUDA_PATH,
                   KGEN_AUDIT_CUTLASS_INCLUDE, KGEN_AUDIT_RUNTIME_INCLUDE, {},
                   KGEN_AUDIT_PCH_DIR};
}

namespace {

// nvcc's version macros, which Clang does not define: CUTLASS/CuTe test them (CUTE_GRID_CONSTANT
// is __grid_constant__ only when __CUDACC_VER_MAJOR__ >= 12), so without them Clang would see a
// different kernel than nvcc compiles. From CUDA_VERSION in the toolkit's cuda.h (13000: 13.0).
std::vector<std::string> nvcc_version_macros(const std::string& cuda_path) {
  std::ifstream in(fs::path(cuda_path) / "include" / "cuda.h");
  const std::string prefix = "#define CUDA_VERSION ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const long version = std::strtol(line.c_str() + prefix.size(), nullptr, 10);
    if (version < 1000) return {};
    return {"-D__CUDACC_VER_MAJOR__=" + std::to_string(version / 1000),
            "-D__CUDACC_VER_MINOR__=" + std::to_string(version % 1000 / 10)};
  }
  return {};
}

}  // namespace

std::vector<std::string> clang_command(const Toolchain& tools, const std::string& file, const std::string& target,
                                       bool device) {
  const Target* emitter = find_target(target);
  if (!emitter || *emitter->cuda_arch() == '\0') throw std::invalid_argument("not a CUDA target: " + target);
  const std::string arch = emitter->cuda_arch();
  std::vector<std::string> command = {
      tools.clang, "-x", "cuda", "--cuda-gpu-arch=" + arch, "--cuda-path=" + tools.cuda_path,
      device ? "--cuda-device-only" : "--cuda-host-only",
      // CUDA 13 is newer than Clang 22 knows (it parses it as 12.9). Not -nocudalib: it also
      // drops -target-sdk-version, and the device pass then rejects every <<<>>> launch
      // (docs/audit.md, "Clang 22 and CUDA 13"). No caret text: diagnostics become findings.
      "-Wno-unknown-cuda-version", "-fsyntax-only", "-fno-caret-diagnostics", "-ferror-limit=20", "-std=c++17",
      "-DNDEBUG"};
  if (!tools.resource_dir.empty()) command.insert(command.end(), {"-resource-dir", tools.resource_dir});
  // CUDA 13 keeps libcu++/CUB/Thrust in include/cccl (nvcc adds it; Clang does not).
  const fs::path cccl = fs::path(tools.cuda_path) / "include" / "cccl";
  if (fs::is_directory(cccl)) command.insert(command.end(), {"-isystem", cccl.string()});
  command.insert(command.end(), {"-isystem", tools.cutlass_include});
  // kgen's own headers are not system headers: Clang reports what it finds in them.
  if (!tools.runtime_include.empty()) command.insert(command.end(), {"-I", tools.runtime_include});
  for (const std::string& macro : nvcc_version_macros(tools.cuda_path)) command.push_back(macro);
  command.insert(command.end(), tools.extra_args.begin(), tools.extra_args.end());
  command.push_back(file);
  return command;
}

namespace {

// The interface the file has, as the emitter would write it.
Json observed_interface(const Merged& merged) {
  Json entry_points = Json::array();
  for (const KernelFact& kernel : merged.kernels) {
    Json params = Json::array();
    for (const ParamFact& param : kernel.params) {
      Json item{{"name", param.name}, {"type", param.type}};
      if (param.grid_constant) item["grid_constant"] = true;
      params.push_back(item);
    }
    Json bounds = Json::object();
    if (kernel.max_threads) bounds["max_threads"] = *kernel.max_threads;
    if (kernel.min_blocks) bounds["min_blocks"] = *kernel.min_blocks;
    if (kernel.max_blocks) bounds["max_blocks"] = *kernel.max_blocks;
    std::optional<int64_t> bytes = kernel.smem_need;
    Json launched;  // the (last) launch whose grid and block are constants
    for (const LaunchFact& launch : merged.launches) {
      if (launch.kernel != kernel.name) continue;
      if (launch.smem_bytes) bytes = launch.smem_bytes;
      if (launch.grid && launch.block) launched = {{"grid", *launch.grid}, {"block", *launch.block}};
    }
    entry_points.push_back({{"name", kernel.name},
                            {"params", params},
                            {"launch_bounds", kernel.has_launch_bounds ? bounds : Json()},
                            {"launch", launched},
                            {"dynamic_smem_bytes", bytes ? Json(*bytes) : Json()}});
  }
  return Json{{"entry_points", entry_points}};
}

}  // namespace

struct ParseCache::Impl {
  struct Entry {
    PassFacts device, host;
    PassTimes times;
  };
  std::map<std::string, Entry> entries;
  int parses = 0;
};

ParseCache::ParseCache() : impl(std::make_unique<Impl>()) {}
ParseCache::~ParseCache() = default;
int ParseCache::parses() const { return impl->parses; }

namespace {

// The cache key: both command lines, and every file of the folder the parse reads from.
std::string cache_key(const std::vector<std::string>& device, const std::vector<std::string>& host,
                      const std::string& dir) {
  std::string key;
  for (const auto* command : {&device, &host})
    for (const std::string& word : *command) key += word + '\0';
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir.empty() ? "." : dir))
    if (entry.is_regular_file() && entry.path().filename() != "MANIFEST.json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    bool ok = false;
    key += path.generic_string() + '\0' + read_text(path, ok) + '\0';
  }
  return key;
}

}  // namespace

std::vector<Finding> audit_cuda_file(const CudaKernelFile& file, const Toolchain& tools, PassTimes* times,
                                     Json* observed, ParseCache* cache) {
  const std::string dir = fs::path(file.path).parent_path().string();
  const std::vector<std::string> device_command = clang_command(tools, file.path, file.target, true);
  const std::vector<std::string> host_command = clang_command(tools, file.path, file.target, false);
  const std::string prelude = prelude_text(tools.runtime_include, file.target, file.path);
  auto timed = [&](const std::vector<std::string>& command, bool device, double& seconds) {
    const auto start = std::chrono::steady_clock::now();
    const PreludePch pch({command.begin(), command.end() - 1}, prelude, tools.pch_dir);
    auto parse = [&](const std::optional<std::string>& pch_path) {
      std::vector<std::string> with_pch = command;
      if (pch_path) with_pch.insert(with_pch.end() - 1, {"-include-pch", *pch_path});
      return run_clang_pass(with_pch, AuditedCode{dir.empty() ? "." : dir, tools.runtime_include}, device);
    };
    const std::optional<std::string> kept = pch.path();
    PassFacts facts = parse(kept);
    if (kept && std::any_of(facts.findings.begin(), facts.findings.end(),
                            [](const Finding& f) { return PreludePch::is_pch_error(f.message); }))
      facts = parse(pch.path(/*rebuild=*/true));  // stale: without one when it cannot be rebuilt
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return facts;
  };
  ParseCache local;
  ParseCache& parses = cache ? *cache : local;
  const std::string key = cache_key(device_command, host_command, dir);
  auto it = parses.impl->entries.find(key);
  if (it == parses.impl->entries.end()) {
    ParseCache::Impl::Entry entry;
    entry.device = timed(device_command, true, entry.times.device_seconds);
    entry.host = timed(host_command, false, entry.times.host_seconds);
    ++parses.impl->parses;
    it = parses.impl->entries.emplace(key, std::move(entry)).first;
  }
  const PassFacts& device = it->second.device;
  const PassFacts& host = it->second.host;
  if (times) *times = it->second.times;

  std::vector<Finding> findings = device.findings;
  findings.insert(findings.end(), host.findings.begin(), host.findings.end());
  if (observed) *observed = Json();
  if (device.compiled && host.compiled) {
    const Merged merged = merge(device, host);
    if (observed) *observed = observed_interface(merged);
    check_names(file, merged, findings);
    if (file.interface) check_interface(file, *file.interface, merged, findings);
  }
  sort_unique(findings);
  return findings;
}

AuditReport audit_generated(const std::string& generated_dir, const std::string& spec_name, const Toolchain& tools,
                            ParseCache* cache) {
  AuditReport report;
  const fs::path folder = fs::path(generated_dir) / spec_name;
  const std::string manifest_path = (folder / "MANIFEST.json").lexically_normal().generic_string();
  auto manifest_finding = [&](unsigned line, const char* rule, const std::string& message) {
    report.findings.push_back({manifest_path, line, rule, message});
  };
  bool ok = false;
  const std::string text = read_text(manifest_path, ok);
  if (!ok) {
    manifest_finding(1, rule::kManifest, "cannot read the manifest (run make gen for this spec)");
    return report;
  }
  Json manifest;
  try {
    manifest = Json::parse(text);
  } catch (const Json::exception& error) {
    manifest_finding(1, rule::kManifest, std::string("not JSON: ") + error.what());
    return report;
  }
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) {
    manifest_finding(1, rule::kManifest, "expected an object with a \"files\" object");
    return report;
  }
  if (manifest.value("name", std::string()) != spec_name)
    manifest_finding(line_of(text, "\"name\""), rule::kManifest,
                     "\"name\" is " + manifest.value("name", Json()).dump() + "; expected \"" + spec_name + "\"");
  for (const auto& [file_name, entry] : manifest["files"].items()) {
    if (!entry.is_object()) continue;
    const std::string role = entry.value("role", std::string());
    const std::string target = entry.value("target", std::string());
    const Target* emitter = find_target(target);
    if (role != "kernel" || !emitter || *emitter->cuda_arch() == '\0') continue;
    const unsigned entry_line = line_of(text, "\"" + file_name + "\"");
    const std::string path = (folder / file_name).lexically_normal().generic_string();
    const std::string pass = entry.value("pass", std::string());
    const std::optional<GeneratedName> parsed = parse_generated_file_name(file_name);
    if (!parsed || parsed->spec_name != spec_name || parsed->target != target || parsed->pass != pass ||
        parsed->suffix != "cu")
      manifest_finding(entry_line, rule::kManifest,
                       "\"" + file_name + "\" is not named " + generated_file_name(spec_name, target, "cu", pass) +
                           " (docs/naming.md)");
    const std::string symbol = entry.value("symbol", std::string());
    if (symbol != kernel_symbol(spec_name, target, pass))
      manifest_finding(entry_line, rule::kManifest,
                       "the symbol of \"" + file_name + "\" is \"" + symbol + "\"; expected \"" +
                           kernel_symbol(spec_name, target, pass) + "\" (docs/naming.md)");
    CudaKernelFile file{path, target, spec_name, symbol, std::nullopt, pass};
    if (!entry.contains("interface")) {
      report.without_interface.push_back(path);
      report.findings.push_back({path, 1, rule::kInterface,
                                 "MANIFEST.json gives no \"interface\" for " + file_name +
                                     ": entry points, parameters, launch bounds and shared memory are not "
                                     "checked (docs/audit.md, \"The interface\")"});
    } else {
      try {
        file.interface = parse_interface(entry["interface"]);
      } catch (const std::exception& error) {
        manifest_finding(line_of(text, "\"interface\"", entry_line), rule::kInterface,
                         "files[\"" + file_name + "\"]." + error.what());
      }
    }
    if (!fs::is_regular_file(path)) {
      manifest_finding(entry_line, rule::kManifest, "lists " + file_name + ", which does not exist");
      continue;
    }
    AuditedFile audited{path, target, {}, Json()};
    std::vector<Finding> findings = audit_cuda_file(file, tools, &audited.times, &audited.observed, cache);
    report.findings.insert(report.findings.end(), findings.begin(), findings.end());
    report.audited.push_back(audited);
  }
  sort_unique(report.findings);
  return report;
}

}  // namespace kgen::audit
