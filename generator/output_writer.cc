#include "output_writer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>

#include "json_fields.h"
#include "text_files.h"

namespace kgen {
namespace fs = std::filesystem;
namespace {

// The files one spec folder's MANIFEST.json says kgen wrote there (itself included).
std::set<std::string> files_in_old_manifest(const fs::path& folder) {
  std::set<std::string> names;
  const std::optional<std::string> text = read_text_file((folder / "MANIFEST.json").string());
  if (!text) return names;
  const Json manifest = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_object() && manifest.contains("files") && manifest["files"].is_object())
    for (const auto& [name, entry] : manifest["files"].items()) names.insert(name);
  return names;
}

std::set<std::string> folders_of(const std::vector<GeneratedFile>& files) {
  std::set<std::string> folders;
  for (const GeneratedFile& file : files) folders.insert(fs::path(file.path).parent_path().string());
  return folders;
}

}  // namespace

void write_atomically(const std::filesystem::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".kgen-tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  fs::rename(temporary, path);
}

WriteReport write_outputs(const std::string& out_dir, const std::vector<GeneratedFile>& files) {
  WriteReport report;
  std::set<std::string> produced;
  for (const GeneratedFile& file : files) produced.insert(file.path);
  for (const std::string& folder : folders_of(files))
    for (const std::string& name : files_in_old_manifest(fs::path(out_dir) / folder))
      if (!produced.count(folder + "/" + name) && fs::remove(fs::path(out_dir) / folder / name))
        report.removed.push_back(folder + "/" + name);
  for (const GeneratedFile& file : files) {
    if (!file.companion_writer.empty()) continue;  // its writer writes it (companion_writers.h)
    const fs::path path = fs::path(out_dir) / file.path;
    if (read_text_file(path.string()) == file.content) {
      report.unchanged.push_back(file.path);
      continue;
    }
    write_atomically(path, file.content);
    report.written.push_back(file.path);
  }
  return report;
}

std::vector<std::string> find_stale_outputs(const std::string& out_dir,
                                            const std::vector<GeneratedFile>& files) {
  std::vector<std::string> stale;
  std::set<std::string> produced;
  for (const GeneratedFile& file : files) {
    produced.insert(file.path);
    if (!file.companion_writer.empty()) continue;  // its writer's --check compares it
    const fs::path path = fs::path(out_dir) / file.path;
    const std::optional<std::string> existing = read_text_file(path.string());
    if (!existing)
      stale.push_back(path.string() + ": missing\n");
    else if (*existing != file.content)
      stale.push_back(unified_diff(path.string(), path.string() + " (checked in)", file.content,
                                   path.string() + " (regenerated)"));
  }
  for (const std::string& folder : folders_of(files)) {
    const fs::path dir = fs::path(out_dir) / folder;
    if (!fs::is_directory(dir)) continue;
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    for (const std::string& name : names)
      if (!produced.count(folder + "/" + name))
        stale.push_back((dir / name).string() + ": no longer generated\n");
  }
  return stale;
}

}  // namespace kgen
