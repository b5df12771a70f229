// The hand-written runtime a target's generated kernels include (runtime/<target>/, e.g. the
// sm90a forward kernel's CuTe headers; docs/sm90a-kernel.md). Generated files name its
// content hash in their provenance, and receipts cover its files, so a runtime change makes
// both stale.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kgen {

struct RuntimeFile {
  std::string path;  // relative to the project root: "runtime/sm90a/forward/kernel.cuh"
  std::string content;
};

// Every regular file under <root>/runtime/<target>, sorted by path; empty when the target
// has no runtime. Throws std::runtime_error when a file cannot be read.
std::vector<RuntimeFile> read_runtime_files(const std::string& root, const std::string& target);

// The SHA-256 (lowercase hex) of the files in path order, each as its path, a NUL, its size
// in decimal, a NUL and its bytes: no absolute path, no time, the same on every machine.
std::string runtime_hash(const std::vector<RuntimeFile>& files);

// Target -> the hash of its runtime, for every folder under <root>/runtime: what
// render_spec_outputs writes into the provenance of that target's kernels.
using RuntimeDigests = std::map<std::string, std::string>;
RuntimeDigests runtime_digests(const std::string& root);

}  // namespace kgen
