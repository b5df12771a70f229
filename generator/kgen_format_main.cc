// kgen-format: kgen's canonical CUDA formatting (cuda_format.h) on files.
//   kgen-format FILE...           print each file formatted (to stdout)
//   kgen-format --check FILE...   exit 1, with a `diff -u` per file, when a file differs
//                                 from its formatted self (`make format-check`)
// A folder stands for every .cu, .cuh and .h file under it, in sorted order.
//   kgen-format --print-style     the embedded style as clang-format YAML
// Exit status: 0 success, 1 a file is not formatted (or cannot be read), 2 bad arguments.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cuda_format.h"
#include "text_files.h"

namespace {

int run(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: kgen-format [--check] FILE|DIR...   (or: kgen-format --print-style)\n";
  if (args.size() == 1 && args[0] == "--print-style") {
    std::cout << kgen::cuda_format_style_yaml() << "\n";
    return 0;
  }
  bool check = false;
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    if (arg == "--check") {
      check = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "kgen-format: unknown option " << arg << "\n" << usage;
      return 2;
    } else if (std::filesystem::is_directory(arg)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        const std::string extension = entry.path().extension().string();
        if (entry.is_regular_file() && (extension == ".cu" || extension == ".cuh" || extension == ".h"))
          found.push_back(entry.path().generic_string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    if (args.empty() || (args.size() == 1 && check)) {
      std::cerr << "kgen-format: no files given\n" << usage;
      return 2;
    }
    return 0;  // folders without .cu or .h files
  }
  int status = 0;
  std::size_t drifted = 0;
  for (const std::string& file : files) {
    const std::optional<std::string> text = kgen::read_text_file(file);
    if (!text) {
      std::cerr << "kgen-format: cannot read " << file << "\n";
      status = 1;
      continue;
    }
    const std::string formatted = kgen::format_cuda(*text);
    if (!check) {
      std::cout << formatted;
    } else if (formatted != *text) {
      std::cerr << kgen::unified_diff(file, file, formatted, file + " (formatted)");
      ++drifted;
      status = 1;
    }
  }
  if (check && drifted > 0)
    std::cerr << "kgen-format: " << drifted << " of " << files.size()
              << " file(s) are not in kgen's CUDA format. Generated files: fix the template or "
                 "regenerate (make gen); every generated .cu/.h passes through format_cuda.\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "kgen-format: " << error.what() << "\n";
    return 1;
  }
}
