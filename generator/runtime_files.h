// The hand-written runtime a target's generated kernels include: runtime/<target>/ (e.g. the
// sm90a kernels' CuTe headers; docs/sm90a-kernel.md) and the folders it shares with other
// targets (runtime/cuda/, what every CUDA kernel shares: docs/architecture.md, "The CUDA
// runtime"), as Target::runtime_folders names them; tpu kernels include none. Generated files
// name its content hash in their provenance, and receipts cover its files, so a runtime change
// makes both stale.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kgen {

struct RuntimeFile {
  std::string path;  // relative to the project root: "runtime/sm90a/forward/kernel.cuh"
  std::string content;
};

// Every regular file under <root>/runtime/<folder> for each of `folders` ("cuda", "sm90a"),
// sorted by path; empty when none exists. Throws std::runtime_error when a file cannot be read.
std::vector<RuntimeFile> read_runtime_files(const std::string& root, const std::vector<std::string>& folders);

// The SHA-256 (lowercase hex) of the files in path order, each as its path, a NUL, its size
// in decimal, a NUL and its bytes: no absolute path, no time, the same on every machine.
std::string runtime_hash(const std::vector<RuntimeFile>& files);

// A target's runtime as its kernels' provenance names it.
struct RuntimeDigest {
  std::vector<std::string> folders;  // "runtime/cuda", "runtime/sm90a"
  std::string sha256;                // runtime_hash of all their files
};

// Target -> its runtime, for every target whose runtime folders hold a file: what
// render_spec_outputs writes into the provenance of that target's kernels.
using RuntimeDigests = std::map<std::string, RuntimeDigest>;
RuntimeDigests runtime_digests(const std::string& root);

// Decode kernels include the decode runtime too: runtime/decode/cuda and runtime/decode/<target>
// (docs/decode.md), kept out of the target's folders so that a decode change leaves every
// forward and backward kernel's provenance and receipts as they are. runtime_digests holds a
// target's decode runtime under this key (its folders and the decode folders) when
// runtime/decode/<target> holds a file.
std::string decode_runtime_key(const std::string& target);  // "sm90a/decode"

}  // namespace kgen
