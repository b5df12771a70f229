// Runs the kgen binary under test (KGEN_BINARY) in a folder, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kgen::testing {

struct KgenRun {
  int status;          // the exit status; -1 when kgen did not exit normally
  std::string output;  // stdout and stderr
};

inline KgenRun run_kgen(const std::string& cwd, const std::string& arguments) {
  const std::string command = "cd '" + cwd + "' && '" KGEN_BINARY "' " + arguments + " 2>&1";
  KgenRun result{0, ""};
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kgen::testing
