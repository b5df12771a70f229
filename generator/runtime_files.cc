#include "runtime_files.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "receipts.h"
#include "targets/target.h"
#include "text_files.h"

namespace kgen {
namespace fs = std::filesystem;

std::vector<RuntimeFile> read_runtime_files(const std::string& root, const std::vector<std::string>& folders) {
  std::vector<RuntimeFile> files;
  for (const std::string& name : folders) {
    const fs::path folder = fs::path(root) / "runtime" / name;
    if (!fs::is_directory(folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(folder)) {
      if (!entry.is_regular_file()) continue;
      const std::string path = "runtime/" + name + "/" + entry.path().lexically_relative(folder).generic_string();
      const std::optional<std::string> content = read_text_file(entry.path().string());
      if (!content) throw std::runtime_error("cannot read " + path);
      files.push_back({path, *content});
    }
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
  for (const Target* target : targets()) {
    const std::vector<std::string> folders = target->runtime_folders();
    const std::vector<RuntimeFile> files = read_runtime_files(root, folders);
    if (files.empty()) continue;
    RuntimeDigest& digest = digests[target->name()];
    for (const std::string& folder : folders) digest.folders.push_back("runtime/" + folder);
    digest.sha256 = runtime_hash(files);

    const std::vector<std::string> decode = {"decode/cuda", std::string("decode/") + target->name()};
    if (read_runtime_files(root, {decode.back()}).empty()) continue;
    std::vector<std::string> decode_folders = folders;
    decode_folders.insert(decode_folders.end(), decode.begin(), decode.end());
    RuntimeDigest& decode_digest = digests[decode_runtime_key(target->name())];
    for (const std::string& folder : decode_folders) decode_digest.folders.push_back("runtime/" + folder);
    decode_digest.sha256 = runtime_hash(read_runtime_files(root, decode_folders));
  }
  return digests;
}

std::string decode_runtime_key(const std::string& target) { return target + "/decode"; }

}  // namespace kgen
