#include "mutation_score.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <tuple>

namespace kgen {
namespace {

constexpr std::size_t kDetailLimit = 300;

// What a child reports through its pipe: the fate's name, a tab, the detail.
struct ChildReport {
  MutantFate fate;
  std::string detail;
};

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > kDetailLimit ? line.substr(0, kDetailLimit) + "..." : line;
}

std::string errors_text(const TpuVerifyResult& result) {
  char text[96];
  std::snprintf(text, sizeof text, "out error %.2e, lse error %.2e", result.comparison.out_error,
                result.comparison.lse_error);
  return text;
}

// A forward kernel's mutants, checked by its TpuVerification.
class ForwardCheck final : public MutantCheck {
 public:
  ForwardCheck(const Spec& spec, const TpuVerifyOptions& options) : verification_(spec, options) {}
  std::function<MutantVerdict()> compile(const std::string& text, const std::string& name) const override {
    auto kernel = std::make_shared<mosaic::MosaicKernel>(verification_.compile(text, name));
    return [this, kernel] {
      const TpuVerifyResult result = verification_.run(*kernel);
      return MutantVerdict{result.passed(), errors_text(result)};
    };
  }

 private:
  TpuVerification verification_;
};

// Runs in the forked child: compile (invalid when that fails), run and compare.
ChildReport verify_in_child(const MutantCheck& check, const std::string& text, const std::string& name) {
  std::function<MutantVerdict()> run;
  try {
    run = check.compile(text, name);
  } catch (const std::exception& error) {
    return {MutantFate::kInvalid, first_line(error.what())};
  }
  try {
    const MutantVerdict verdict = run();
    return {verdict.passed ? MutantFate::kSurvived : MutantFate::kKilled, verdict.errors};
  } catch (const std::exception& error) {
    return {MutantFate::kKilled, "run-time error: " + first_line(error.what())};
  }
}

struct Child {
  pid_t pid = -1;
  int pipe = -1;
};

// Forks a child that verifies `text` and reports through a pipe; it kills itself with
// SIGALRM after `timeout_seconds` and writes no core file.
Child start_child(const MutantCheck& check, const std::string& text, const std::string& name,
                  unsigned timeout_seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork() failed");
  if (pid == 0) {
    ::close(fds[0]);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::alarm(timeout_seconds);
    const ChildReport report = verify_in_child(check, text, name);
    const std::string message = std::string(fate_name(report.fate)) + "\t" + report.detail;
    const ssize_t written = ::write(fds[1], message.data(), message.size());
    ::_exit(written == static_cast<ssize_t>(message.size()) ? 0 : 3);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

ChildReport finish_child(const Child& child, int status) {
  const std::string message = read_all(child.pipe);
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGALRM) return {MutantFate::kTimedOut, "no result within the time limit"};
    return {MutantFate::kCrashed, std::string("signal ") + strsignal(WTERMSIG(status))};
  }
  const std::size_t tab = message.find('\t');
  for (MutantFate fate : {MutantFate::kKilled, MutantFate::kSurvived, MutantFate::kInvalid})
    if (tab != std::string::npos && message.compare(0, tab, fate_name(fate)) == 0) return {fate, message.substr(tab + 1)};
  return {MutantFate::kCrashed, "the verifying process exited with status " + std::to_string(WEXITSTATUS(status))};
}

// `count` of `mutants`, drawn with a Fisher-Yates shuffle on mt19937_64's raw output (the
// std distributions differ between libraries), back in enumeration order.
std::vector<mosaic::Mutant> sample_mutants(std::vector<mosaic::Mutant> mutants, int64_t count, uint64_t seed) {
  if (count <= 0 || count >= static_cast<int64_t>(mutants.size())) return mutants;
  std::mt19937_64 engine(seed);
  for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k)
    std::swap(mutants[k], mutants[k + engine() % (mutants.size() - k)]);
  mutants.resize(static_cast<std::size_t>(count));
  std::sort(mutants.begin(), mutants.end(), [](const mosaic::Mutant& a, const mosaic::Mutant& b) {
    return std::tie(a.op_ordinal, a.variant) < std::tie(b.op_ordinal, b.variant);
  });
  return mutants;
}

// Line `line` (1-based) of `text`, empty when there is none.
std::string source_line(const std::string& text, int line) {
  std::size_t start = 0;
  for (int k = 1; k < line && start != std::string::npos; ++k) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (line < 1 || start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

}  // namespace

const char* fate_name(MutantFate fate) {
  switch (fate) {
    case MutantFate::kKilled: return "killed";
    case MutantFate::kCrashed: return "crashed";
    case MutantFate::kTimedOut: return "timed-out";
    case MutantFate::kSurvived: return "survived";
    case MutantFate::kInvalid: return "invalid";
  }
  return "?";
}

int64_t MutationReport::count(MutantFate fate) const {
  return std::count_if(outcomes.begin(), outcomes.end(), [&](const MutantOutcome& o) { return o.fate == fate; });
}
int64_t MutationReport::killed() const {
  return count(MutantFate::kKilled) + count(MutantFate::kCrashed) + count(MutantFate::kTimedOut);
}
int64_t MutationReport::counted() const { return killed() + count(MutantFate::kSurvived); }
double MutationReport::score() const {
  return counted() ? static_cast<double>(killed()) / static_cast<double>(counted()) : 1.0;
}

std::unique_ptr<MutantCheck> forward_mutant_check(const Spec& spec, const TpuVerifyOptions& options) {
  return std::make_unique<ForwardCheck>(spec, options);
}

MutationReport run_mutants(const Spec& spec, const std::string& module_text, const std::string& module_name,
                           const MutationOptions& options) {
  return run_mutants(ForwardCheck(spec, options.verify), module_text, module_name, options);
}

MutationReport run_mutants(const MutantCheck& check, const std::string& module_text, const std::string& module_name,
                           const MutationOptions& options) {
  MutationReport report;
  const std::vector<mosaic::Mutant> all = mosaic::enumerate_mutants(module_text, module_name);
  report.enumerated = static_cast<int64_t>(all.size());

  // The unmutated kernel, in a child too: this process must stay free of MLIR threads.
  const auto start = std::chrono::steady_clock::now();
  const Child original = start_child(check, module_text, module_name, 600);
  int status = 0;
  ::waitpid(original.pid, &status, 0);
  const ChildReport baseline = finish_child(original, status);
  if (baseline.fate != MutantFate::kSurvived)
    throw std::runtime_error(module_name + ": the unmutated kernel does not pass (" + baseline.detail +
                             "); mutants would say nothing");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const unsigned timeout = static_cast<unsigned>(10 * seconds) + 10;

  std::vector<mosaic::Mutant> selected;
  for (const mosaic::Mutant& mutant : all)
    if (source_line(module_text, mutant.line).find(options.filter) != std::string::npos) selected.push_back(mutant);
  report.selected = static_cast<int64_t>(selected.size());
  const std::vector<mosaic::Mutant> chosen = sample_mutants(selected, options.sample, options.seed);
  report.outcomes.resize(chosen.size());
  std::map<pid_t, std::pair<Child, std::size_t>> running;
  std::size_t next = 0;
  while (next < chosen.size() || !running.empty()) {
    while (next < chosen.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      report.outcomes[next].mutant = chosen[next];
      const std::string text = mosaic::apply_mutant(module_text, module_name, chosen[next]);
      const Child child = start_child(check, text, module_name, timeout);
      running[child.pid] = {child, next++};
    }
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const ChildReport result = finish_child(it->second.first, status);
    report.outcomes[it->second.second].fate = result.fate;
    report.outcomes[it->second.second].detail = result.detail;
    running.erase(it);
  }
  return report;
}

}  // namespace kgen
