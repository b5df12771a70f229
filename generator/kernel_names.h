// The names kgen gives what it generates (docs/naming.md): a spec `name` and a `target`
// make the folder generated/<name>/, the files <name>.<target>.<suffix> in it, the kernel
// symbol <name>_<target> and, for CUDA, the C++ namespace kgen::<name>_<target> that holds
// the file's entry points. A backward kernel adds its pass: <name>.<target>.<pass>.<suffix>
// and <name>_<target>_<pass>. Every such name parses back to its spec name, target and pass.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kgen {

// Spec names: [a-z][a-z0-9_]*, at most 64 characters (docs/spec-format.md §1; spec.cc enforces it).
bool is_spec_name(const std::string& name);
// The targets, in the order specs and manifests list them: tpu, sm90a, sm100a.
const std::vector<std::string>& generated_targets();
bool is_generated_target(const std::string& target);
// What follows <name>.<target>. in a file name: mlir, cu, h, operands.json, plan.json,
// custom_call.json.
const std::vector<std::string>& generated_suffixes();
// The backward's kernels (docs/spec-format.md §7): dq and dkv on tpu, one "backward" file of
// three kernels on sm90a. The forward has no pass name.
const std::vector<std::string>& generated_passes();

struct GeneratedName {
  std::string spec_name;
  std::string target;
  std::string suffix;  // "" for a symbol or a namespace
  std::string pass;    // "" for the forward, else one of generated_passes()
};

// <name>.<target>[.<pass>].<suffix>, e.g. splash.sm90a.cu, splash.tpu.dkv.mlir.
std::string generated_file_name(const std::string& spec_name, const std::string& target,
                                const std::string& suffix, const std::string& pass = "");
// <name>_<target>[_<pass>], e.g. splash_sm90a, splash_tpu_dkv: the kernel symbol of MANIFEST.json.
std::string kernel_symbol(const std::string& spec_name, const std::string& target, const std::string& pass = "");
// kgen::<name>_<target>[_<pass>]: the namespace of a CUDA file's entry points and launcher.
std::string kernel_namespace(const std::string& spec_name, const std::string& target, const std::string& pass = "");

// The inverses: nullopt unless the whole string follows the grammar. A file name splits at
// its first '.' (spec names have none); a symbol at its last '_' (targets have none), after
// taking off a trailing _<pass> (no target is a pass).
std::optional<GeneratedName> parse_generated_file_name(const std::string& file_name);
std::optional<GeneratedName> parse_kernel_symbol(const std::string& symbol);
std::optional<GeneratedName> parse_kernel_namespace(const std::string& qualified_name);

}  // namespace kgen
