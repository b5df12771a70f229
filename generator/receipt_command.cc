#include "receipt_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "output_writer.h"
#include "receipts.h"
#include "spec.h"
#include "text_files.h"

namespace kgen {
namespace fs = std::filesystem;
namespace {

const std::string kUsage =
    "usage: kgen receipt add SPEC --target T --check NAME --facts FILE [--generated DIR] [--receipts DIR] [--root DIR]\n"
    "                                       record a check that ran on SPEC's target-T kernel in its receipt\n"
    "       kgen receipt check [--generated DIR] [--receipts DIR]\n"
    "                                       every generated kernel has a current receipt (docs/receipts.md)\n";

struct Arguments {
  std::string verb;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
};

Arguments parse(int argc, char** argv) {
  if (argc < 3) throw SpecError("kgen receipt needs add or check\n" + kUsage);
  Arguments args;
  args.verb = argv[2];
  if (args.verb != "add" && args.verb != "check") throw SpecError("unknown kgen receipt command '" + args.verb + "'\n" + kUsage);
  const std::set<std::string> valued = args.verb == "add"
      ? std::set<std::string>{"--target", "--check", "--facts", "--generated", "--receipts", "--root"}
      : std::set<std::string>{"--generated", "--receipts"};
  for (int k = 3; k < argc; ++k) {
    const std::string arg = argv[k];
    if (valued.count(arg)) {
      if (k + 1 >= argc) throw SpecError("option " + arg + " needs a value\n" + kUsage);
      if (!args.options.emplace(arg, argv[++k]).second) throw SpecError("option " + arg + " given twice\n" + kUsage);
    } else if (!arg.empty() && arg[0] == '-') {
      throw SpecError("unknown option '" + arg + "' for kgen receipt " + args.verb + "\n" + kUsage);
    } else {
      args.positional.push_back(arg);
    }
  }
  return args;
}

ReceiptPaths paths_of(const Arguments& args) {
  ReceiptPaths paths;
  if (args.options.count("--generated")) paths.generated = args.options.at("--generated");
  if (args.options.count("--receipts")) paths.receipts = args.options.at("--receipts");
  if (args.options.count("--root")) paths.root = args.options.at("--root");
  return paths;
}

std::string option(const Arguments& args, const std::string& name) {
  auto it = args.options.find(name);
  if (it == args.options.end()) throw SpecError("kgen receipt add needs " + name + "\n" + kUsage);
  return it->second;
}

int add(const Arguments& args, const std::string& default_root) {
  if (args.positional.size() != 1) throw SpecError("kgen receipt add takes exactly one spec\n" + kUsage);
  const std::string target = option(args, "--target"), check = option(args, "--check"), facts_file = option(args, "--facts");
  const Spec spec = load_spec(args.positional.front(), args.options.count("--root") ? args.options.at("--root") : default_root);
  const std::vector<std::string> targets = spec.target_names();
  if (std::find(targets.begin(), targets.end(), target) == targets.end())
    throw SpecError("--target: found \"" + target + "\", expected one of the spec's targets");
  const std::optional<ReceiptRule> rule = receipt_rule(target);
  if (!rule) throw SpecError("--target: found \"" + target + "\", expected a target kgen knows");
  std::vector<std::string> known = rule->required;
  known.insert(known.end(), rule->optional.begin(), rule->optional.end());
  if (std::find(known.begin(), known.end(), check) == known.end()) {
    std::string list;
    for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
    throw SpecError("--check", "\"" + check + "\"", "a check of the " + target + " receipt: " + list);
  }
  const std::optional<std::string> facts_text = read_text_file(facts_file);
  if (!facts_text) throw SpecError(facts_file + ": cannot read the facts file");
  const Json facts = Json::parse(*facts_text, nullptr, /*allow_exceptions=*/false);
  if (!facts.is_object()) throw SpecError(facts_file, "no JSON object", "the check's facts as one JSON object");

  const ReceiptPaths paths = paths_of(args);
  const FileHashes current = hash_kernel_files(paths, spec.name, *rule);
  std::vector<std::string> expected = rule->file_suffixes;
  if (spec.backward) expected.insert(expected.end(), rule->backward_file_suffixes.begin(), rule->backward_file_suffixes.end());
  const bool complete = std::all_of(expected.begin(), expected.end(),
                                    [&](const std::string& suffix) { return current.count(spec.name + suffix) > 0; });
  if (!complete)
    throw SpecError(paths.kernel_folder(spec.name) + ": found no complete " + target + " kernel, expected "
                    "its generated files (make gen SPEC=" + spec.source + ")");
  const std::string path = paths.receipt_file(spec.name, target);
  const Json receipt = with_check(read_receipt(path).value_or(Json()), {spec.name, target, spec.source}, current, check, facts);
  const std::string text = receipt_text(receipt);
  if (read_text_file(path) != text) write_atomically(path, text);
  std::cout << path << ": " << check << " " << (facts.value("passed", false) ? "passed" : "FAILED") << "\n";
  return 0;
}

// Every receipt the generated kernels need (name.target -> regenerate command), from the
// MANIFEST.json of each folder: every kernel of a target kgen knows.
std::map<std::pair<std::string, std::string>, std::string> kernels_needing_receipts(const ReceiptPaths& paths) {
  std::map<std::pair<std::string, std::string>, std::string> needed;
  if (!fs::is_directory(paths.generated)) throw SpecError(paths.generated + ": not a folder of generated kernels");
  for (const fs::directory_entry& folder : fs::directory_iterator(paths.generated)) {
    const auto text = read_text_file((folder.path() / "MANIFEST.json").string());
    if (!text) continue;
    const Json manifest = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) continue;
    const std::string name = manifest.value("name", folder.path().filename().string());
    for (const auto& [file, entry] : manifest["files"].items()) {
      const std::string target = entry.value("target", "");
      if (entry.value("role", "") == "kernel" && receipt_rule(target))
        needed[{name, target}] = "make verify SPEC=" + manifest.value("spec", "specs/" + name + ".json");
    }
  }
  return needed;
}

int check(const Arguments& args) {
  if (!args.positional.empty()) throw SpecError("kgen receipt check takes no spec: it checks every generated kernel\n" + kUsage);
  const ReceiptPaths paths = paths_of(args);
  const auto needed = kernels_needing_receipts(paths);
  int bad = 0;
  for (const auto& [kernel, regenerate] : needed) {
    const auto& [name, target] = kernel;
    const ReceiptStatus status = kernel_receipt_status(paths, name, target, *receipt_rule(target));
    if (status.current()) continue;
    ++bad;
    std::cerr << paths.receipt_file(name, target) << ": " << status_name(status.kind) << "\n";
    for (const std::string& reason : status.reasons) std::cerr << "  " << reason << "\n";
    std::cerr << "  regenerate with: " << regenerate << "\n";
  }
  // A receipt whose kernel is gone (spec removed or renamed) would vouch for nothing.
  std::set<std::string> expected;
  for (const auto& [kernel, regenerate] : needed) expected.insert(paths.receipt_file(kernel.first, kernel.second));
  if (fs::is_directory(paths.receipts))
    for (const fs::directory_entry& entry : fs::directory_iterator(paths.receipts)) {
      const std::string path = paths.receipts + "/" + entry.path().filename().string();
      if (entry.path().extension() != ".json" || expected.count(path)) continue;
      ++bad;
      std::cerr << path << ": orphan: no generated kernel of that name and target under " << paths.generated
                << "; delete it\n";
    }
  if (bad) {
    std::cerr << "kgen receipt check: " << bad << " receipt(s) not current (" << needed.size()
              << " needed). Receipts are regenerated, never edited: make verify\n";
    return 1;
  }
  std::cout << "kgen receipt check: " << needed.size() << " receipts current\n";
  return 0;
}

}  // namespace

int run_receipt_command(int argc, char** argv, const char* project_root) {
  const Arguments args = parse(argc, argv);
  return args.verb == "add" ? add(args, project_root) : check(args);
}

}  // namespace kgen
