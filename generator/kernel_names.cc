#include "kernel_names.h"

#include "targets/target.h"

#include <algorithm>

namespace kgen {
namespace {

constexpr std::size_t kMaxSpecNameLength = 64;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

bool is_spec_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxSpecNameLength || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

const std::vector<std::string>& generated_targets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const Target* target : targets()) list.push_back(target->name());
    return list;
  }();
  return names;
}

bool is_generated_target(const std::string& target) { return contains(generated_targets(), target); }

const std::vector<std::string>& generated_suffixes() {
  static const std::vector<std::string> suffixes = {"mlir", "cu", "h", "operands.json", "plan.json", "custom_call.json"};
  return suffixes;
}

const std::vector<std::string>& generated_passes() {
  static const std::vector<std::string> passes = {"dq", "dkv", "backward", "combine"};
  return passes;
}

std::string generated_file_name(const std::string& spec_name, const std::string& target,
                                const std::string& suffix, const std::string& pass) {
  return spec_name + "." + target + "." + (pass.empty() ? "" : pass + ".") + suffix;
}

std::string kernel_symbol(const std::string& spec_name, const std::string& target, const std::string& pass) {
  return spec_name + "_" + target + (pass.empty() ? "" : "_" + pass);
}

std::string kernel_namespace(const std::string& spec_name, const std::string& target, const std::string& pass) {
  return "kgen::" + kernel_symbol(spec_name, target, pass);
}

std::optional<GeneratedName> parse_generated_file_name(const std::string& file_name) {
  const std::size_t first = file_name.find('.');
  if (first == std::string::npos) return std::nullopt;
  const std::size_t second = file_name.find('.', first + 1);
  if (second == std::string::npos) return std::nullopt;
  GeneratedName name{file_name.substr(0, first), file_name.substr(first + 1, second - first - 1),
                     file_name.substr(second + 1), ""};
  const std::size_t third = name.suffix.find('.');
  if (third != std::string::npos && contains(generated_passes(), name.suffix.substr(0, third))) {
    name.pass = name.suffix.substr(0, third);
    name.suffix = name.suffix.substr(third + 1);
  }
  if (!is_spec_name(name.spec_name) || !is_generated_target(name.target) ||
      !contains(generated_suffixes(), name.suffix))
    return std::nullopt;
  return name;
}

std::optional<GeneratedName> parse_kernel_symbol(const std::string& symbol) {
  std::string rest = symbol, pass;
  const std::size_t pass_start = symbol.rfind('_');
  if (pass_start != std::string::npos && contains(generated_passes(), symbol.substr(pass_start + 1))) {
    pass = symbol.substr(pass_start + 1);
    rest = symbol.substr(0, pass_start);
  }
  const std::size_t last = rest.rfind('_');
  if (last == std::string::npos) return std::nullopt;
  GeneratedName name{rest.substr(0, last), rest.substr(last + 1), "", pass};
  if (!is_spec_name(name.spec_name) || !is_generated_target(name.target)) return std::nullopt;
  return name;
}

std::optional<GeneratedName> parse_kernel_namespace(const std::string& qualified_name) {
  const std::string prefix = "kgen::";
  if (qualified_name.rfind(prefix, 0) != 0) return std::nullopt;
  return parse_kernel_symbol(qualified_name.substr(prefix.size()));
}

}  // namespace kgen
