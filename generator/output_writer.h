// Writes generated files: atomically (a temporary beside the target, then rename), only
// when their content changed, and never partially.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "spec_outputs.h"

namespace kgen {

struct WriteReport {
  std::vector<std::string> written;    // new or changed
  std::vector<std::string> unchanged;
  std::vector<std::string> removed;    // listed by the old manifest, no longer generated
};

// Writes `content` to `path` (creating its folder) through a temporary beside it and a
// rename, so a reader never sees a partial file. Also how receipts are written.
void write_atomically(const std::filesystem::path& path, const std::string& content);

WriteReport write_outputs(const std::string& out_dir, const std::vector<GeneratedFile>& files);

// Compares `files` with what is under `out_dir`; returns one readable report per stale
// file (a unified diff, or what is missing or extra), empty when all is fresh.
std::vector<std::string> find_stale_outputs(const std::string& out_dir,
                                            const std::vector<GeneratedFile>& files);

}  // namespace kgen
