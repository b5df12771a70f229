#include "prelude_pch.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "receipts.h"  // sha256_hex

extern char** environ;

namespace kgen::audit {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` by a rename, so that a concurrent audit never reads half a file.
bool write_atomically(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    if (!out) return false;
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  return !error;
}

// Runs `command` with its output discarded; true when it exits with status 0.
bool run_quietly(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const std::regex kMacro(R"(^\s*#\s*(define|undef)\b)");

// Appends the third-party headers `file` includes to `headers`, in the order the preprocessor
// meets them: a runtime header it includes is followed first (CuTe's headers are not
// independent of their order: copy_atom.hpp needs tensor.hpp before it). False when a runtime
// file it reaches sets a macro, which could configure what it includes.
bool collect_includes(const fs::path& file, const fs::path& runtime, std::set<fs::path>& visited,
                      std::vector<std::string>& headers) {
  if (!visited.insert(file).second) return true;
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::ifstream in(file);
  std::smatch match;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, kMacro)) return false;
    if (!std::regex_search(line, match, include)) continue;
    const std::string name = match[2].str();
    std::error_code error;
    bool followed = true;
    if (match[1] == "\"" && fs::is_regular_file(file.parent_path() / name, error))
      followed = collect_includes(file.parent_path() / name, runtime, visited, headers);
    else if (fs::is_regular_file(runtime / name, error))
      followed = collect_includes(runtime / name, runtime, visited, headers);
    else if (match[1] == "<" && std::find(headers.begin(), headers.end(), name) == headers.end())
      headers.push_back(name);
    if (!followed) return false;
  }
  return true;
}

}  // namespace

std::string prelude_text(const std::string& runtime_include, const std::string& target,
                         const std::string& kernel_file) {
  std::error_code error;
  const fs::path runtime(runtime_include);
  if (runtime_include.empty() || !fs::is_directory(runtime / target, error)) return "";
  static const std::regex include(R"(^\s*#\s*include\b)");
  static const std::regex opens(R"(^\s*#\s*if)");
  static const std::regex closes(R"(^\s*#\s*endif\b)");

  // The kernel's head: its preprocessor lines before its first #include (the macros that
  // configure CuTe). A macro set after an include would configure only later headers, which
  // a PCH built before the file cannot follow: no prelude then.
  std::ostringstream head;
  bool included = false;
  int depth = 0;
  std::ifstream in(kernel_file);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, include)) included = true;
    if (included) {
      if (std::regex_search(line, kMacro)) return "";
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] != '#') continue;
    depth += std::regex_search(line, opens) - std::regex_search(line, closes);
    head << line << "\n";
  }
  if (depth != 0) return "";  // the first include is conditional

  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(runtime / target, error)) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".cuh" || extension == ".h" || extension == ".hpp"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::set<fs::path> visited;
  std::vector<std::string> headers;
  for (const fs::path& file : files)
    if (!collect_includes(file, runtime, visited, headers)) return "";
  if (headers.empty()) return "";
  std::string text = head.str();
  for (const std::string& header : headers) text += "#include <" + header + ">\n";
  return text;
}

PreludePch::PreludePch(std::vector<std::string> pass_command, const std::string& prelude, const std::string& dir)
    : command_(std::move(pass_command)), prelude_(prelude) {
  if (dir.empty() || prelude_.empty()) return;
  std::string key_text = prelude_;
  for (const std::string& word : command_) key_text += "\n" + word;
  folder_ = (fs::path(dir) / sha256_hex(key_text).substr(0, 16)).string();
}

std::optional<std::string> PreludePch::path(bool rebuild) const {
  if (folder_.empty()) return std::nullopt;
  const fs::path pch = fs::path(folder_) / "prelude.pch";
  std::error_code error;
  const fs::path failed = fs::path(folder_) / "prelude.failed";  // Clang could not build it
  if (!rebuild && fs::exists(pch, error)) return pch.string();
  if (!rebuild && fs::exists(failed, error)) return std::nullopt;
  const fs::path prelude = fs::path(folder_) / "prelude.cuh";
  fs::create_directories(folder_, error);
  // Rewritten only when absent: the PCH records the prelude's time, and a rewrite would make
  // every PCH built from it stale.
  if (!fs::exists(prelude, error) && !write_atomically(prelude, prelude_)) return std::nullopt;
  const std::string temporary = pch.string() + ".tmp." + std::to_string(::getpid());
  std::vector<std::string> command = command_;
  command.insert(command.end(), {"-Xclang", "-emit-pch", "-Xclang", "-o", "-Xclang", temporary, prelude.string()});
  if (!run_quietly(command)) {
    fs::remove(temporary, error);
    write_atomically(failed, "");
    return std::nullopt;
  }
  fs::rename(temporary, pch, error);
  if (error) return std::nullopt;
  return pch.string();
}

bool PreludePch::is_pch_error(const std::string& message) {
  return message.find("precompiled") != std::string::npos || message.find("PCH") != std::string::npos;
}

}  // namespace kgen::audit
