// kgen-verify: checks a generated kernel against the float64 reference. `kgen verify`
// runs this binary, which keeps MLIR out of the generator.
//
//   kgen-verify SPEC --target tpu [--generated DIR] [--seed N] [--max-pairs N] [--all-rows] [--report FILE] [--root DIR]
//   kgen-verify SPEC --target tpu --mutants [--filter TEXT] [--sample N] [--jobs N] [--min-score PERCENT] [...]
//   kgen-verify SPEC --target sm90a|sm100a --compile-only [--generated DIR] [--report FILE] [--root DIR]
//   kgen-verify SPEC --target sm90a|sm100a [--generated DIR] [--seed N] [--sample auto|all|first-slice|work-items] [--report FILE]
//   kgen-verify SPEC --target sm90a|sm100a --mutants [--min-score PERCENT] [--generated DIR]
//   kgen-verify SPEC --target sm90a --gpu [--seed N] [--receipt FILE] [--root DIR]
//
// The tpu kernel runs on the CPU (for a spec with "backward": true, then its dq and dkv
// kernels on the forward's out and lse: verify/tpu_backward_verifier.h); with --mutants, so
// does every mutant of the forward kernel
// (verify/mutation_score.h), and the exit status says whether enough were rejected. With
// --compile-only the sm90a (sm100a) kernel is compiled for sm_90a (sm_100a) and its SASS inspected
// (verify/cuda/compile_check.py): no GPU is needed, none is used. An sm100a kernel is only
// run on ptxemu: no Blackwell GPU exists here.
// Without --compile-only, a CUDA kernel (and its backward, where generated) executes on the CPU
// from its own PTX on ptxemu, the emulator of verify/cuda/emu, driven by kgen's GPU harness
// linked with the emulator's runtime stand-in (verify/cuda/emulate.py; docs/cuda-emulation.md);
// with --mutants, so do its synchronization mutants (verify/cuda/sync_mutants.py). --gpu runs
// the GPU harness (built by `make cuda`) on the current GPU instead. --report writes the
// check's facts as JSON for the kernel's receipt (`kgen receipt add`, docs/receipts.md).
//
// Exit status: 0 the kernel matches, 1 it does not (or does not compile), 2 bad
// arguments or spec.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "decode_mutant_checks.h"
#include "diagnostics.h"
#include "exit_status.h"
#include "kernel_names.h"
#include "mutation_score.h"
#include "output_writer.h"
#include "spec.h"
#include "targets/target.h"
#include "tpu_backward_verifier.h"
#include "tpu_verifier.h"
#include "tpu_verify_report.h"

#ifndef KGEN_PROJECT_ROOT
#error "the build defines KGEN_PROJECT_ROOT"
#endif

namespace kgen {
namespace {

const char kUsage[] =
    "usage: kgen verify SPEC --target tpu [--generated DIR] [--seed N] [--max-pairs N] [--all-rows] [--report FILE] "
    "[--root DIR]\n"
    "       kgen verify SPEC --target tpu --mutants [--filter TEXT] [--sample N] [--jobs N] [--min-score PERCENT] [same options]\n"
    "       kgen verify SPEC --target sm90a|sm100a --compile-only [--generated DIR] [--report FILE] [--root DIR]\n"
    "       kgen verify SPEC --target sm90a|sm100a [--generated DIR] [--seed N] [--sample auto|all|first-slice|work-items] "
    "[--report FILE]   (on the CPU emulator)\n"
    "       kgen verify SPEC --target sm90a|sm100a --mutants [--min-score PERCENT] [--generated DIR]\n"
    "       kgen verify SPEC --target sm90a --gpu [--seed N] [--receipt FILE] [--root DIR]   (on a GPU, after make cuda)\n";

// argv for exec and spawn: the arguments' characters, then a null.
std::vector<char*> c_arguments(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// Runs a program to its end; its exit status (127 when it cannot start).
int run_program(const std::vector<std::string>& args) {
  std::vector<char*> argv = c_arguments(args);
  pid_t pid = 0;
  if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return 127;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The compile-only check of a spec's kernels: the forward, and the backward where generated;
// with both, the report holds each one's facts.
int compile_checks(const Spec& spec, const std::string& generated, const Target& target, const std::string& report) {
  std::vector<std::pair<std::string, std::string>> kernels = {
      {"forward", generated + "/" + spec.name + "/" + generated_file_name(spec.name, target.name(), "cu")}};
  const std::string backward = generated + "/" + spec.name + "/" + generated_file_name(spec.name, target.name(), "cu", "backward");
  if (spec.backward && std::filesystem::exists(backward)) kernels.emplace_back("backward", backward);
  Json facts = Json::object();
  bool passed = true;
  for (const auto& [role, kernel] : kernels) {
    const std::string part = report.empty() ? "" : report + "." + role;
    std::vector<std::string> args = {KGEN_PYTHON,          KGEN_COMPILE_CHECK, kernel,        "--nvcc",
                                     KGEN_NVCC,            "--cutlass-include", KGEN_CUTLASS_INCLUDE, "--runtime-include",
                                     KGEN_RUNTIME_INCLUDE, "--cuobjdump",      KGEN_CUOBJDUMP, "--arch",
                                     target.cuda_arch()};
    if (!part.empty()) args.insert(args.end(), {"--report", part});
    const int status = run_program(args);
    if (status == 2 || status == 127) return 2;
    passed = passed && status == 0;
    if (!part.empty() && std::filesystem::exists(part)) {
      std::ifstream in(part);
      facts[role] = Json::parse(in);
      std::filesystem::remove(part);
    }
  }
  if (!report.empty()) {
    // One kernel: its facts as they are; with a backward, both under their roles.
    Json out = kernels.size() == 1 ? facts["forward"] : facts;
    if (kernels.size() > 1) out["passed"] = passed;
    write_atomically(report, out.dump(2) + "\n");
  }
  return passed ? 0 : 1;
}

// Replaces this process with `args` (a tool of verify/cuda).
[[noreturn]] void exec_tool(const std::vector<std::string>& args) {
  std::vector<char*> argv = c_arguments(args);
  ::execv(argv[0], argv.data());
  throw std::runtime_error("cannot run " + args.front() + " (make deps creates it)");
}

// Replaces this process with the GPU harness of one sm90a kernel, which prints its own
// report (and writes a JSON receipt when asked); its exit status (0 pass, 1 fail or no
// GPU) is kgen verify's. `passed` are the options it takes from kgen verify.
[[noreturn]] void run_sm90a_harness(const std::string& spec_path, const Spec& spec,
                                    const std::map<std::string, std::string>& passed) {
  const std::string harness = std::string(KGEN_SM90A_HARNESS_DIR) + "/sm90a_run_" + spec.name;
  if (!std::filesystem::exists(harness))
    throw std::runtime_error(harness + " does not exist: make cuda builds the harness of every kernel in "
                             "generated/ and tests/cuda/specs/");
  std::vector<const char*> argv = {harness.c_str(), spec_path.c_str()};
  for (const auto& [option, value] : passed) argv.insert(argv.end(), {option.c_str(), value.c_str()});
  argv.push_back(nullptr);
  ::execv(harness.c_str(), const_cast<char* const*>(argv.data()));
  throw std::runtime_error("cannot run " + harness);
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

int64_t parse_count(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || value < 0) throw SpecError(option + ": found \"" + text + "\", expected a count\n" + kUsage);
  return value;
}

std::string read_module(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path + ": cannot read the generated kernel (run make gen first)");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs the dq and dkv kernels on the forward kernel's residuals and prints each gradient's
// error against docs/spec-format.md §7's tolerance.
TpuBackwardResult verify_tpu_backward(const Spec& spec, const std::string& generated, const std::string& forward_module,
                                      const TpuVerifyOptions& verify) {
  auto path_of = [&](const char* pass) {
    return generated + "/" + spec.name + "/" + generated_file_name(spec.name, "tpu", "mlir", pass);
  };
  std::cout << "kgen verify " << spec.name << " --target tpu, backward: " << path_of("dq") << ", " << path_of("dkv")
            << "\n" << std::flush;
  const TpuBackwardVerification verification(spec, forward_module, verify);
  const TpuBackwardResult result = verification.check(read_module(path_of("dq")), read_module(path_of("dkv")));
  const std::string tolerance = format("%.0e", result.tolerance);
  std::cout << "  sample: " << result.sample << "\n"
            << "  compile " << format("%.2f", result.compile_seconds) << " s; dq and dkv grid steps run " << result.steps_run
            << " in " << format("%.2f", result.run_seconds) << " s (with the forward, which wrote out and lse)\n"
            << "  dq error " << format("%.2e", result.dq_error) << ", dk error " << format("%.2e", result.dk_error)
            << ", dv error " << format("%.2e", result.dv_error)
            << (spec.sinks ? ", dsinks error " + format("%.2e", result.dsinks_error) : std::string())
            << " (tolerance " << tolerance << " each): " << (result.passed() ? "PASS" : "FAIL") << "\n";
  return result;
}

// Prints the mutation score of a tpu kernel and its survivors; 1 when the score is below
// --min-score (default 95%).
int run_mutation_score(const std::string& spec_name, const MutantCheck& check, const std::string& module_text,
                       const std::string& module_path,
                       const TpuVerifyOptions& verify, std::map<std::string, std::string>& options) {
  MutationOptions mutation;
  mutation.verify = verify;
  mutation.seed = verify.seed;
  if (options.count("--filter")) mutation.filter = options["--filter"];
  if (options.count("--sample")) mutation.sample = parse_count("--sample", options["--sample"]);
  if (options.count("--jobs")) mutation.jobs = static_cast<int>(std::max<int64_t>(1, parse_count("--jobs", options["--jobs"])));
  const double min_score = options.count("--min-score") ? static_cast<double>(parse_count("--min-score", options["--min-score"])) : 95;
  if (min_score > 100) throw SpecError("--min-score: found \"" + options["--min-score"] + "\", expected a percentage\n" + kUsage);

  const MutationReport report = run_mutants(check, module_text, module_path, mutation);
  std::cout << "kgen verify " << spec_name << " --target tpu --mutants: " << module_path << "\n  "
            << report.enumerated << " mutants"
            << (mutation.filter.empty() ? "" : ", " + std::to_string(report.selected) + " on lines containing \"" + mutation.filter + "\"")
            << ", " << report.outcomes.size() << " run"
            << (mutation.sample > 0 && mutation.sample < report.enumerated ? " (a sample drawn with seed " + std::to_string(mutation.seed) + ")" : "")
            << "\n  killed " << report.killed() << " (wrong outputs " << report.count(MutantFate::kKilled) << ", crashed "
            << report.count(MutantFate::kCrashed) << ", timed out " << report.count(MutantFate::kTimedOut) << "), survived "
            << report.count(MutantFate::kSurvived) << ", invalid " << report.count(MutantFate::kInvalid)
            << " (rejected by MLIR or the executor; not counted)\n";
  for (const MutantOutcome& outcome : report.outcomes)
    if (outcome.fate == MutantFate::kSurvived || outcome.fate == MutantFate::kInvalid)
      std::cout << "  " << fate_name(outcome.fate) << ": " << module_path << ":" << outcome.mutant.line << ": "
                << outcome.mutant.edit << " (" << outcome.detail << ")\n";
  const double percent = 100 * report.score();
  const bool enough = percent >= min_score;
  std::cout << "  mutation score " << report.killed() << "/" << report.counted() << " = " << format("%.1f", percent)
            << "% (required " << format("%.0f", min_score) << "%): " << (enough ? "PASS" : "FAIL") << "\n";
  return enough ? 0 : 1;
}

// A decode spec's tpu kernel and, when split, its combine: both run on the CPU against
// dense_decode over every kv_lens case (verify/tpu_decode_verifier.h).
int verify_tpu_decode(const Spec& spec, const std::string& generated, const TpuVerifyOptions& verify,
                      std::map<std::string, std::string>& options, bool mutants) {
  const TpuDecodeVerification verification(spec, verify);
  const std::string folder = generated + "/" + spec.name + "/";
  const std::string kernel_path = folder + generated_file_name(spec.name, "tpu", "mlir");
  const std::string combine_path = folder + generated_file_name(spec.name, "tpu", "mlir", "combine");
  const std::string kernel_text = read_module(kernel_path);
  const std::string combine_text = verification.splits() > 1 ? read_module(combine_path) : "";
  if (mutants) {
    // Each module's mutants with the other as generated; one score over both.
    int status = run_mutation_score(spec.name, *decode_kernel_check(verification, combine_text, combine_path), kernel_text,
                                    kernel_path, verify, options);
    if (!combine_text.empty())
      status = std::max(status, run_mutation_score(spec.name, *decode_combine_check(verification, kernel_text, kernel_path),
                                                   combine_text, combine_path, verify, options));
    return status;
  }
  std::cout << "kgen verify " << spec.name << " --target tpu: " << kernel_path
            << (combine_text.empty() ? "" : " and " + combine_path) << "\n" << std::flush;
  const TpuDecodeVerifyResult result = verification.check(kernel_text, kernel_path, combine_text, combine_path);
  std::cout << "  sample: " << result.sample << "\n"
            << "  compile " << format("%.2f", result.compile_seconds) << " s; grid steps run " << result.steps_run
            << " (" << result.steps_skipped << " outside the sample) in " << format("%.2f", result.run_seconds) << " s\n"
            << "  kv DMAs " << result.kv_copies << " (at most " << result.kv_copies_allowed
            << ": one per page or block of the live ranges)" << (result.copies_within() ? "" : ": TOO MANY") << "\n"
            << "  DMA schedule: " << (result.schedule_mismatch.empty() ? "as docs/decode.md says" : result.schedule_mismatch) << "\n";
  if (result.combine)
    std::cout << "  combine alone (empty parts and rows, lse past exp's f32 range): out error "
              << format("%.2e", result.combine->out_error) << ", lse error " << format("%.2e", result.combine->lse_error)
              << (spec.lse ? "" : " (not an output)") << "\n";
  std::cout << "  out error " << format("%.2e", result.comparison.out_error) << " (tolerance "
            << format("%.0e", result.tolerance.out_relative) << "), lse error "
            << format("%.2e", result.comparison.lse_error) << " (tolerance " << format("%.0e", result.tolerance.lse_absolute)
            << (spec.lse ? ")" : "; no lse output)") << ": " << (result.passed() ? "PASS" : "FAIL") << "\n";
  if (options.count("--report")) write_atomically(options["--report"], tpu_decode_facts(spec, verify, result).dump(2) + "\n");
  return result.passed() ? 0 : 1;
}

int run(int argc, char** argv) {
  std::vector<std::string> specs;
  std::map<std::string, std::string> options;
  bool compile_only = false, mutants = false;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--compile-only") {
      compile_only = true;
    } else if (arg == "--mutants") {
      mutants = true;
    } else if (arg == "--gpu" || arg == "--all-rows") {
      options[arg] = "";
    } else if (arg == "--target" || arg == "--generated" || arg == "--seed" || arg == "--max-pairs" || arg == "--root" ||
               arg == "--receipt" || arg == "--report" || arg == "--sample" || arg == "--jobs" || arg == "--min-score" ||
               arg == "--filter") {
      if (k + 1 >= argc) throw SpecError("option " + arg + " needs a value\n" + kUsage);
      if (!options.emplace(arg, argv[++k]).second) throw SpecError("option " + arg + " given twice\n" + kUsage);
    } else if (!arg.empty() && arg[0] == '-') {
      throw SpecError("unknown option '" + arg + "' for kgen verify\n" + kUsage);
    } else {
      specs.push_back(arg);
    }
  }
  if (specs.size() != 1) throw SpecError(std::string("kgen verify takes exactly one spec\n") + kUsage);
  if (!options.count("--target")) throw SpecError(std::string("kgen verify needs --target\n") + kUsage);
  const std::string target = options["--target"];
  if (target != "tpu" && target != "sm90a" && target != "sm100a")
    throw SpecError("--target: found \"" + target + "\", expected tpu, sm90a or sm100a\n" + kUsage);
  if (compile_only && target == "tpu")
    throw SpecError(std::string("--compile-only: only for --target sm90a or sm100a (a tpu kernel runs on the CPU)\n") +
                    kUsage);
  const bool cuda = target != "tpu";
  if (options.count("--gpu") && target != "sm90a")
    throw SpecError(std::string("--gpu: only for --target sm90a (no Blackwell GPU exists here)\n") + kUsage);
  for (const char* option : {"--sample", "--jobs", "--filter"})
    if (options.count(option) && !mutants && !(cuda && std::string(option) == "--sample"))
      throw SpecError(std::string(option) + ": only with --mutants\n" + kUsage);
  if (options.count("--min-score") && !mutants) throw SpecError(std::string("--min-score: only with --mutants\n") + kUsage);
  if (options.count("--all-rows") && cuda) throw SpecError(std::string("--all-rows: only for --target tpu\n") + kUsage);
  if (options.count("--receipt") && !options.count("--gpu"))
    throw SpecError(std::string("--receipt: only for the GPU harness (--target sm90a --gpu)\n") + kUsage);
  if (options.count("--report") && mutants)
    throw SpecError(std::string("--report: not with --mutants, which prints its score\n") + kUsage);
  if (options.count("--report") && options.count("--gpu"))
    throw SpecError(std::string("--report: not for the GPU harness, whose --receipt writes its facts\n") + kUsage);
  if (options.count("--seed")) parse_count("--seed", options["--seed"]);  // refused here, not by the tools

  const std::string root = options.count("--root") ? options["--root"] : KGEN_PROJECT_ROOT;
  const Spec spec = load_spec(specs.front(), root);
  const std::vector<std::string> targets = spec.target_names();
  if (std::find(targets.begin(), targets.end(), target) == targets.end())
    throw SpecError(specs.front() + ": targets: found no \"" + target + "\", expected the target to verify");
  const std::string generated = options.count("--generated") ? options["--generated"] : "generated";
  if (compile_only) return compile_checks(spec, generated, *find_target(target), options["--report"]);
  if (options.count("--gpu")) {
    if (options.count("--generated") || options.count("--max-pairs"))
      throw SpecError(std::string("--generated and --max-pairs: not for the GPU harness, which make cuda builds "
                                  "from generated/ and checks every output\n") + kUsage);
    std::map<std::string, std::string> passed;
    for (const char* option : {"--seed", "--receipt"})
      if (options.count(option)) passed[option] = options[option];
    run_sm90a_harness(specs.front(), spec, passed);
  }
  if (cuda && mutants) {
    // The forward's synchronization mutants, then the backward's (where generated).
    std::vector<std::pair<std::string, std::string>> subjects = {
        {std::string(KGEN_SM90A_HARNESS_DIR) + "/" + target + "_emu_run_" + spec.name, "forward_kernel"}};
    if (spec.backward && target == "sm90a")
      subjects.emplace_back(std::string(KGEN_SM90A_HARNESS_DIR) + "/sm90a_emu_backward_run_" + spec.name, "_backward");
    int status = 0;
    for (const auto& [harness, module] : subjects) {
      std::vector<std::string> args = {KGEN_PYTHON, KGEN_SYNC_MUTANTS, harness, specs.front(), "--module", module};
      if (options.count("--min-score"))
        args.insert(args.end(), {"--min-score", format("%g", std::stod(options["--min-score"]) / 100.0)});
      status = std::max(status, run_program(args));
    }
    return status;
  }
  if (cuda) {
    std::vector<std::string> args = {KGEN_PYTHON, KGEN_EMULATE, specs.front(), "--target", target, "--harness-dir",
                                     KGEN_SM90A_HARNESS_DIR, "--generated", generated};
    for (const char* option : {"--seed", "--sample", "--report"})
      if (options.count(option)) args.insert(args.end(), {option, options[option]});
    exec_tool(args);
  }
  TpuVerifyOptions verify;
  if (options.count("--seed")) verify.seed = static_cast<uint64_t>(parse_count("--seed", options["--seed"]));
  if (options.count("--max-pairs")) verify.max_pairs = static_cast<int>(parse_count("--max-pairs", options["--max-pairs"]));
  // Every reference row of the sampled pairs, however long the sequence: what a mutation
  // score needs, where one mutant may move a single key of a few rows (a window's edge).
  if (options.count("--all-rows")) verify.dense_row_budget = std::numeric_limits<int64_t>::max();

  if (spec.decode) return verify_tpu_decode(spec, generated, verify, options, mutants);
  const std::string module_path = generated + "/" + spec.name + "/" + generated_file_name(spec.name, "tpu", "mlir");
  const std::string module_text = read_module(module_path);

  if (mutants) return run_mutation_score(spec.name, *forward_mutant_check(spec, verify), module_text, module_path, verify, options);
  std::cout << "kgen verify " << spec.name << " --target tpu: " << module_path << "\n" << std::flush;
  const TpuVerifyResult result = verify_tpu_kernel(spec, module_text, module_path, verify);
  std::cout << "  sample: " << result.sample << "\n"
            << "  compile " << format("%.2f", result.compile_seconds) << " s; grid steps run "
            << result.steps_run << " (" << result.steps_skipped << " outside the sample) in "
            << format("%.2f", result.run_seconds) << " s\n";
  if (spec.segment_ids) {
    const DocumentStepCounts& steps = result.document_steps;
    std::cout << "  steps the plan keeps " << steps.planned << ": " << steps.dead
              << " dead (skipped by the document ranges), " << steps.one_document
              << " inside one document (no id comparison), " << steps.compared() << " compare ids\n";
  }
  std::cout << "  out error " << format("%.2e", result.comparison.out_error) << " (tolerance "
            << format("%.0e", result.tolerance.out_relative) << "), lse error "
            << format("%.2e", result.comparison.lse_error) << " (tolerance " << format("%.0e", result.tolerance.lse_absolute)
            << (spec.lse ? ")" : "; no lse output)") << ": " << (result.passed() ? "PASS" : "FAIL") << "\n";
  Json facts = tpu_verify_facts(spec, verify, result);
  bool passed = result.passed();
  // The forward's out and lse are the backward's residuals: a failed forward is reported
  // alone, with the backward unchecked.
  if (spec.backward && !passed)
    std::cout << "kgen verify " << spec.name << " --target tpu, backward: not checked (the forward failed, and its "
              << "out and lse are the backward's inputs)\n";
  if (spec.backward && passed) {
    const TpuBackwardResult backward = verify_tpu_backward(spec, generated, module_text, verify);
    facts["backward"] = tpu_backward_facts(spec, backward);
    facts["passed"] = passed = backward.passed();
  }
  if (options.count("--report")) write_atomically(options["--report"], facts.dump(2) + "\n");
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace kgen

int main(int argc, char** argv) {
  return kgen::exit_status_of("kgen verify", [&] { return kgen::run(argc, argv); });
}
