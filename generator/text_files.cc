#include "text_files.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kgen {
namespace {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string unified_diff(const std::string& path, const std::string& old_label, const std::string& expected,
                         const std::string& new_label) {
  char temporary[] = "/tmp/kgen-expected-XXXXXX";
  const int fd = ::mkstemp(temporary);
  if (fd < 0) return "(cannot create a temporary file for the diff)\n";
  const ssize_t written = ::write(fd, expected.data(), expected.size());
  ::close(fd);
  std::string diff;
  if (written == static_cast<ssize_t>(expected.size())) {
    const std::string command = "diff -u --label " + shell_quote(old_label) + " --label " + shell_quote(new_label) +
                                " " + shell_quote(path) + " " + shell_quote(temporary);
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[4096];
      std::size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) diff.append(buffer, n);
      ::pclose(pipe);
    }
  }
  ::unlink(temporary);
  return diff.empty() ? "(the file differs, but diff could not show how)\n" : diff;
}

}  // namespace kgen
