// kgen-audit SPEC... [--generated DIR] [options]: every generated CUDA kernel of the specs,
// parsed by Clang and checked against its MANIFEST.json interface and the lint rules
// (docs/audit.md). `kgen audit` is to run this binary, as `kgen verify` runs kgen-verify.
// Exit status: 0 no finding, 1 findings (each printed as file:line: [rule] message), 2 bad
// arguments or an unreadable spec; with --skip-code N, N when nothing was found but checks
// could not run (no CUDA kernel file, or one whose manifest gives no interface yet).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit.h"
#include "kernel_names.h"

namespace {

const char* const kUsage =
    "usage: kgen-audit SPEC... [--generated DIR] [--timing] [--print-command] [--print-interface]\n"
    "                  [--cuda-path DIR] [--cutlass-include DIR] [--runtime-include DIR] [--extra-arg ARG]... [--skip-code N]\n"
    "                  [--no-pch]\n"
    "  audits DIR/<name>/ (default DIR: generated) for each spec: every sm90a/sm100a kernel\n"
    "  file its MANIFEST.json lists (docs/audit.md)\n"
    "  --skip-code N: exit N, not 0, when no CUDA kernel file was found or a kernel file has\n"
    "  no interface yet (that is then a note, not a finding); ctest's SKIP_RETURN_CODE\n"
    "  --no-pch: parse CUDA/CUTLASS/CuTe in every pass, not from the build's prelude PCH\n";

struct BadArguments : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The spec's name: the only field the audit needs (generated/<name>/).
std::string spec_name_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadArguments(path + ": cannot read the spec");
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw BadArguments(path + ": not JSON: " + error.what());
  }
  if (!spec.is_object() || !spec.contains("name") || !spec["name"].is_string() ||
      !kgen::is_spec_name(spec["name"].get<std::string>()))
    throw BadArguments(path + ": name: expected [a-z][a-z0-9_]* of at most 64 characters");
  return spec["name"].get<std::string>();
}

int run(int argc, char** argv) {
  kgen::audit::Toolchain tools = kgen::audit::default_toolchain();
  std::string generated = "generated";
  bool timing = false, print_command = false, print_interface = false;
  std::optional<int> skip_code;
  std::vector<std::string> specs;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) throw BadArguments("option " + arg + " needs a value");
      return argv[++k];
    };
    if (arg == "--generated") generated = value();
    else if (arg == "--cuda-path") tools.cuda_path = value();
    else if (arg == "--cutlass-include") tools.cutlass_include = value();
    else if (arg == "--runtime-include") tools.runtime_include = value();
    else if (arg == "--extra-arg") tools.extra_args.push_back(value());
    else if (arg == "--timing") timing = true;
    else if (arg == "--no-pch") tools.pch_dir.clear();
    else if (arg == "--skip-code") {
      const std::string code = value();
      if (code.empty() || code.find_first_not_of("0123456789") != std::string::npos || code.size() > 3)
        throw BadArguments("--skip-code needs an exit status (0-255)");
      skip_code = std::stoi(code);
    }
    else if (arg == "--print-command") print_command = true;
    else if (arg == "--print-interface") print_interface = true;
    else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (!arg.empty() && arg[0] == '-') throw BadArguments("unknown option " + arg);
    else specs.push_back(arg);
  }
  if (specs.empty()) throw BadArguments("no spec given");
  if (!std::filesystem::is_directory(std::filesystem::path(tools.cutlass_include) / "cute"))
    std::cerr << "kgen-audit: no CUTLASS/CuTe headers in " << tools.cutlass_include
              << " (make deps installs them; or pass --cutlass-include DIR)\n";
  std::vector<std::string> names;
  for (const std::string& spec : specs) names.push_back(spec_name_of(spec));

  std::size_t findings = 0, audited = 0, pending = 0;
  for (const std::string& name : names) {
    const kgen::audit::AuditReport report = kgen::audit::audit_generated(generated, name, tools);
    for (const kgen::audit::Finding& finding : report.findings) {
      const bool no_interface =
          finding.rule == kgen::audit::rule::kInterface && finding.line == 1 &&
          std::find(report.without_interface.begin(), report.without_interface.end(), finding.file) !=
              report.without_interface.end();
      if (skip_code && no_interface) {
        std::cerr << "kgen-audit: " << finding.file
                  << ": MANIFEST.json gives no interface yet: its interface checks are skipped\n";
        ++pending;
        continue;
      }
      std::cout << finding.str() << "\n";
      ++findings;
    }
    audited += report.audited.size();
    for (const kgen::audit::AuditedFile& file : report.audited) {
      if (timing)
        std::cerr << "kgen-audit: " << file.path << ": device pass " << std::fixed << std::setprecision(2)
                  << file.times.device_seconds << " s, host pass " << file.times.host_seconds << " s\n";
      if (print_interface)
        std::cerr << "kgen-audit: " << file.path << ": the interface it has (docs/audit.md):\n"
                  << file.observed.dump(2) << "\n";
      if (!print_command) continue;
      for (bool device : {true, false}) {
        std::cerr << "kgen-audit: " << (device ? "device" : "host") << " pass:";
        for (const std::string& word : kgen::audit::clang_command(tools, file.path, file.target, device))
          std::cerr << " " << word;
        std::cerr << "\n";
      }
    }
  }
  std::cerr << "kgen-audit: audited " << audited << " file(s), " << findings << " finding(s)\n";
  if (findings > 0) return 1;
  if (skip_code && (audited == 0 || pending > 0)) return *skip_code;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const BadArguments& error) {
    std::cerr << "kgen-audit: " << error.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "kgen-audit: internal error: " << error.what() << "\n";
    return 1;
  }
}
