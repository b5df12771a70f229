// The kgen command line (docs/spec-format.md §6). Exit status: 0 success, 2 a bad spec or bad
// arguments (nothing written), 1 any other failure.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "auto_tiles.h"
#include "companion_writers.h"
#include "diagnostics.h"
#include "document_skips.h"
#include "exit_status.h"
#include "explain.h"
#include "output_writer.h"
#include "plan_json.h"
#include "receipt_command.h"
#include "receipts.h"
#include "spec.h"
#include "kernel_plans.h"
#include "spec_outputs.h"
#include "template_engine.h"
#include "tune_command.h"

#ifndef KGEN_VERIFY_BINARY
#error "the build defines KGEN_VERIFY_BINARY, the kgen-verify executable"
#endif
#ifndef KGEN_AUDIT_BINARY
#error "the build defines KGEN_AUDIT_BINARY, the kgen-audit executable"
#endif
#ifndef KGEN_PYTHON
#error "the build defines KGEN_PYTHON, the Python (.venv) that runs the companion writers"
#endif
#ifndef KGEN_PROJECT_ROOT
#error "the build defines KGEN_PROJECT_ROOT, where templates/ and specs/ live"
#endif

namespace kgen {
namespace {

const std::string kUsage =
    "usage: kgen gen SPEC... [--out DIR] [--check]   write (or with --check, compare)\n"
    "                                                DIR/<name>/ for each spec (default DIR: generated)\n"
    "       kgen plan SPEC --target T [--pass P]     print the block plan of target T as JSON; P is\n"
    "                                                forward (default), dq or dkv (docs/spec-format.md §7);\n"
    "                                                decode for a decode spec (its default; docs/decode.md)\n"
    "       kgen explain SPEC [--document-lengths L1,L2,...]  summarize a spec for a reviewer; with\n"
    "                                                documents of those lengths packed in order, each\n"
    "                                                target's steps dead or inside one document\n"
    "       kgen verify SPEC --target T [...]        check a generated kernel against the reference\n"
    "       kgen audit SPEC... [--generated DIR]     check generated CUDA with Clang (docs/audit.md)\n"
    "       kgen receipt add|check [...]             record checks in, or check, docs/receipts/ (docs/receipts.md)\n"
    "       kgen tune SPEC --target T [--pass P] [...] measure every legal tiling, rank it, write tuning/ (docs/tuning.md)\n"
    "common option: --root DIR   the project root (templates/, and what spec paths are relative to)\n";

struct Arguments {
  std::string command;
  std::vector<std::string> specs;
  std::map<std::string, std::string> options;
  bool check = false;
};

Arguments parse_arguments(int argc, char** argv) {
  if (argc < 2) throw SpecError(std::string("no command given\n") + kUsage);
  Arguments args;
  args.command = argv[1];
  if (args.command != "gen" && args.command != "plan" && args.command != "explain")
    throw SpecError("unknown command '" + args.command + "'\n" + kUsage);
  const std::set<std::string> valued = {"--out", "--target", "--pass", "--root", "--document-lengths"};
  for (int k = 2; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--check" && args.command == "gen") {
      args.check = true;
    } else if (valued.count(arg)) {
      if (k + 1 >= argc) throw SpecError("option " + arg + " needs a value\n" + kUsage);
      if (!args.options.emplace(arg, argv[++k]).second) throw SpecError("option " + arg + " given twice\n" + kUsage);
    } else if (!arg.empty() && arg[0] == '-') {
      throw SpecError("unknown option '" + arg + "' for kgen " + args.command + "\n" + kUsage);
    } else {
      args.specs.push_back(arg);
    }
  }
  if (args.specs.empty()) throw SpecError("kgen " + args.command + " needs a spec file\n" + kUsage);
  if (args.command != "gen" && args.specs.size() != 1)
    throw SpecError("kgen " + args.command + " takes exactly one spec\n" + kUsage);
  if (args.command == "plan" && !args.options.count("--target"))
    throw SpecError("kgen plan needs --target tpu|sm90a|sm100a\n" + kUsage);
  for (const char* option : {"--target", "--pass"})
    if (args.command != "plan" && args.options.count(option))
      throw SpecError(std::string(option) + " belongs to kgen plan\n" + kUsage);
  if (args.command != "gen" && args.options.count("--out"))
    throw SpecError("--out belongs to kgen gen\n" + kUsage);
  if (args.command != "explain" && args.options.count("--document-lengths"))
    throw SpecError("--document-lengths belongs to kgen explain\n" + kUsage);
  return args;
}

std::string root_of(const Arguments& args) {
  auto it = args.options.find("--root");
  return it != args.options.end() ? it->second : KGEN_PROJECT_ROOT;
}

// Errors found after parsing (a plan too large for SMEM, say) name the spec file too.
template <typename Work>
auto naming_spec_file(const std::string& file, Work work) {
  try {
    return work();
  } catch (const SpecError& error) {
    throw SpecError(file + ": " + error.what());
  }
}

TemplateEngine make_engine(const std::string& root) {
  return TemplateEngine([root](const std::string& path) {
    std::ifstream in(root + "/templates/" + path, std::ios::binary);
    if (!in) throw TemplateError("templates/" + path + ": cannot read this template");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  });
}

int run_gen(const Arguments& args) {
  const std::string root = root_of(args);
  const std::string out_dir = args.options.count("--out") ? args.options.at("--out") : "generated";
  // Every spec is validated and rendered before anything is written.
  std::vector<GeneratedFile> files;
  std::vector<std::string> notes, tuning_problems;
  std::map<std::string, std::string> spec_of_name;
  CompanionWork companions;
  TemplateEngine engine = make_engine(root);
  const RuntimeDigests runtimes = runtime_digests(root);
  for (const std::string& file : args.specs) {
    Spec spec = load_spec(file, root);
    auto [it, fresh] = spec_of_name.emplace(spec.name, file);
    if (!fresh) throw SpecError(file + ": name: found \"" + spec.name + "\", expected a name no other spec uses (" + it->second + " has it)");
    std::vector<GeneratedFile> outputs = naming_spec_file(file, [&] { return render_spec_outputs(spec, engine, runtimes); });
    add_companion_work(companions, file, outputs);
    std::move(outputs.begin(), outputs.end(), std::back_inserter(files));
    for (const std::string& problem : auto_tile_problems(spec)) tuning_problems.push_back(file + ": " + problem);
    for (const std::string& target : targets_without_backward(spec))
      notes.push_back("kgen: note: " + file + ": \"backward\": true, but target " + target +
                      " generates no backward kernel for this spec; only its forward is written (kgen explain "
                      "says why; docs/backward.md)\n");
    for (const std::string& target : targets_without_decode(spec))
      notes.push_back("kgen: note: " + file + ": target " + target +
                      " generates no decode kernel yet; only the other targets' kernels are written (docs/decode.md)\n");
  }
  const auto write_companions = [&] {
    return run_companion_writers(companions, out_dir, args.check, KGEN_PYTHON, KGEN_PROJECT_ROOT "/python");
  };
  if (args.check) {
    const std::vector<std::string> stale = find_stale_outputs(out_dir, files);
    const int companions_status = write_companions();
    // An "auto" tile field with no current tuning entry fails the check (docs/tuning.md).
    for (const std::string& problem : tuning_problems) std::cerr << "kgen: " << problem << "\n";
    if (stale.empty()) return tuning_problems.empty() && companions_status == 0 ? 0 : 1;
    for (const std::string& report : stale) std::cerr << report;
    std::cerr << "kgen: " << stale.size() << " generated file(s) under " << out_dir
              << " are stale. Fix with:\n  make gen";
    if (args.specs.size() == 1) std::cerr << " SPEC=" << args.specs.front();
    std::cerr << "\nand commit the result.\n";
    return 1;
  }
  const WriteReport report = write_outputs(out_dir, files);
  for (const std::string& note : notes) std::cerr << note;
  for (const std::string& problem : tuning_problems)
    std::cerr << "kgen: note: " << problem << "; the default rule chose meanwhile where the entry had no legal tiling\n";
  for (const std::string& path : report.written) std::cout << "wrote " << out_dir << "/" << path << "\n";
  for (const std::string& path : report.removed) std::cout << "removed " << out_dir << "/" << path << "\n";
  std::cout << report.unchanged.size() << " file(s) unchanged\n";
  return write_companions();
}

// The verifiers (MLIR, the reference) and the audit (Clang LibTooling) live in their own
// binaries so that the generator stays small; `kgen verify` and `kgen audit` become them,
// with the same arguments, and their exit status is kgen's.
[[noreturn]] void become(const char* binary, char** argv) {
  argv[1] = const_cast<char*>(binary);
  ::execv(binary, argv + 1);
  throw std::runtime_error(std::string("cannot run ") + binary + " (build it with make build)");
}

int run(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "verify") become(KGEN_VERIFY_BINARY, argv);
  if (argc >= 2 && std::string(argv[1]) == "audit") become(KGEN_AUDIT_BINARY, argv);
  if (argc >= 2 && std::string(argv[1]) == "receipt") return run_receipt_command(argc, argv, KGEN_PROJECT_ROOT);
  if (argc >= 2 && std::string(argv[1]) == "tune") {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", error);
    return run_tune_command(argc, argv, KGEN_PROJECT_ROOT, error ? std::string(argv[0]) : self.string());
  }
  const Arguments args = parse_arguments(argc, argv);
  if (args.command == "gen") return run_gen(args);
  const std::string& file = args.specs.front();
  const Spec spec = load_spec(file, root_of(args));
  std::cout << naming_spec_file(file, [&] {
    if (args.command == "plan") {
      const auto pass = args.options.find("--pass");
      return plan_json(spec, args.options.at("--target"),
                       pass != args.options.end() ? pass->second : spec.decode ? "decode" : "forward")
                 .dump() + "\n";
    }
    const auto lengths = args.options.find("--document-lengths");
    const std::string documents =
        lengths != args.options.end() ? explain_document_lengths(spec, parse_document_lengths(lengths->second)) : "";
    return explain_spec(spec) + documents + explain_receipts(spec, ReceiptPaths{});
  });
  return 0;
}

}  // namespace
}  // namespace kgen

int main(int argc, char** argv) {
  return kgen::exit_status_of("kgen: internal error", [&] { return kgen::run(argc, argv); });
}
