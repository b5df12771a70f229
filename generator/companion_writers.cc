#include "companion_writers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

namespace kgen {

void add_companion_work(CompanionWork& work, const std::string& spec_file, const std::vector<GeneratedFile>& files) {
  for (const GeneratedFile& file : files) {
    if (file.companion_writer.empty()) continue;
    std::vector<std::string>& specs = work[file.companion_writer];
    if (std::find(specs.begin(), specs.end(), spec_file) == specs.end()) specs.push_back(spec_file);
  }
}

namespace {

// One writer as a child process: its output goes where kgen's does.
int run_writer(const std::vector<std::string>& arguments, const std::string& package_dir) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cannot start " + arguments.front() + ": fork failed");
  if (child == 0) {
    const char* inherited = std::getenv("PYTHONPATH");
    const std::string path = package_dir + (inherited && *inherited ? ":" + std::string(inherited) : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
    ::setenv("JAX_PLATFORMS", "cpu", 1);  // the serializer needs no accelerator
    std::vector<char*> argv;
    for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    ::execv(argv.front(), argv.data());
    ::_exit(127);  // the parent reports it (run_companion_writers)
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("lost " + arguments.front() + ": waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_companion_writers(const CompanionWork& work, const std::string& out_dir, bool check,
                          const std::string& python, const std::string& package_dir) {
  for (const auto& [writer, specs] : work) {
    std::vector<std::string> arguments = {python, "-m", writer, "--out", out_dir};
    if (check) arguments.push_back("--check");
    arguments.insert(arguments.end(), specs.begin(), specs.end());
    const int status = run_writer(arguments, package_dir);
    if (status == 127) throw std::runtime_error("cannot run " + python + " -m " + writer + " (make deps installs it)");
    if (status != 0) return status;
  }
  return 0;
}

}  // namespace kgen
