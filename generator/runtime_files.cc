#include "runtime_files.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "receipts.h"
#include "text_files.h"

namespace kgen {
namespace fs = std::filesystem;

std::vector<RuntimeFile> read_runtime_files(const std::string& root, const std::string& target) {
  std::vector<RuntimeFile> files;
  const fs::path folder = fs::path(root) / "runtime" / target;
  if (!fs::is_directory(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = "runtime/" + target + "/" + entry.path().lexically_relative(folder).generic_string();
    const std::optional<std::string> content = read_text_file(entry.path().string());
    if (!content) throw std::runtime_error("cannot read " + path);
    files.push_back({path, *content});
  }
  std::sort(files.begin(), files.end(), [](const RuntimeFile& a, const RuntimeFile& b) { return a.path < b.path; });
  return files;
}

std::string runtime_hash(const std::vector<RuntimeFile>& files) {
  std::string bytes;
  for (const RuntimeFile& file : files) {
    bytes += file.path;
    bytes += '\0';
    bytes += std::to_string(file.content.size());
    bytes += '\0';
    bytes += file.content;
  }
  return sha256_hex(bytes);
}

RuntimeDigests runtime_digests(const std::string& root) {
  RuntimeDigests digests;
  const fs::path folder = fs::path(root) / "runtime";
  if (!fs::is_directory(folder)) return digests;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!entry.is_directory()) continue;
    const std::string target = entry.path().filename().string();
    const std::vector<RuntimeFile> files = read_runtime_files(root, target);
    if (!files.empty()) digests[target] = runtime_hash(files);
  }
  return digests;
}

}  // namespace kgen
