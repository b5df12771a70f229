// Receipts: what ran on each generated kernel (docs/receipts.md). One JSON file per kernel
// and target, docs/receipts/<name>.<target>.json, holding the SHA-256 of the files it covers
// and one section per check that ran on exactly those bytes. This is the only code that
// writes receipts; the checks hand their facts over as JSON (`kgen receipt add`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "json_fields.h"

namespace kgen {

// File name (inside generated/<name>/, or a runtime file's path from the project root,
// "runtime/sm90a/forward/kernel.cuh") -> lowercase hex SHA-256 of its bytes.
using FileHashes = std::map<std::string, std::string>;

// What a target's receipt covers and which checks it must hold to be current.
struct ReceiptRule {
  std::vector<std::string> file_suffixes;   // ".tpu.mlir": generated/<name>/<name>.tpu.mlir
  std::vector<std::string> required;        // checks `make verify` writes
  std::vector<std::string> optional;        // checks that need hardware (the GPU run)
  std::vector<std::string> runtime;         // {"cuda", "sm90a"}: every file of runtime/cuda and runtime/sm90a too
  // The backward kernels' files, there when the spec says "backward": true (and then required).
  std::vector<std::string> backward_file_suffixes = {};
  // A decode kernel's combine (docs/decode.md), there when the kernel is split.
  std::vector<std::string> combine_file_suffixes = {};
};

// The rule of the target named `target`; nothing for a name no target has.
std::optional<ReceiptRule> receipt_rule(const std::string& target);

// Where receipts and kernels are; both relative to the working directory by default, like
// `kgen verify --generated`.
struct ReceiptPaths {
  std::string generated = "generated";
  std::string receipts = "docs/receipts";
  std::string root = ".";  // where runtime/ is
  std::string receipt_file(const std::string& name, const std::string& target) const;
  std::string kernel_folder(const std::string& name) const;
};

std::string sha256_hex(const std::string& bytes);

// The hashes of the rule's files of kernel `name` and of the runtime's files they were rendered
// with (the runtime folders their MANIFEST.json entries name; the rule's where none are named);
// a missing file is left out.
FileHashes hash_kernel_files(const ReceiptPaths& paths, const std::string& name, const ReceiptRule& rule);

// Who the receipt is for; written at its top.
struct ReceiptHeader {
  std::string name;    // the spec's name
  std::string target;  // tpu, sm90a
  std::string spec;    // specs/<name>.json, as MANIFEST.json names it
};

// `receipt` (null when there is none yet) with check `check` set to `facts` as run on the
// files hashed in `current`. Checks recorded for other bytes are dropped: a receipt never
// mixes facts about two versions of a kernel.
Json with_check(const Json& receipt, const ReceiptHeader& header, const FileHashes& current, const std::string& check,
                Json facts);

struct ReceiptStatus {
  enum Kind { kCurrent, kIncomplete, kStale, kMissing, kInvalid } kind = kMissing;
  std::vector<std::string> reasons;  // why it is not current, one finding each
  std::vector<std::string> checks;   // "cpu_execution passed" for each recorded check
  bool current() const { return kind == kCurrent; }
};

// Compares a receipt (nullopt: there is none) with the files as they are now.
ReceiptStatus receipt_status(const std::optional<Json>& receipt, const FileHashes& current, const ReceiptRule& rule);

// Reads the receipt file; nullopt when it does not exist. Throws on malformed JSON.
std::optional<Json> read_receipt(const std::string& path);

// The status of kernel `name`'s receipt for `target` against its files on disk (a receipt
// that is not JSON is kInvalid).
ReceiptStatus kernel_receipt_status(const ReceiptPaths& paths, const std::string& name, const std::string& target,
                                    const ReceiptRule& rule);

// "current", "stale", ...: how explain and kgen receipt check name a status.
const char* status_name(ReceiptStatus::Kind kind);

// The receipt as written: two-space JSON with sorted keys and a final newline, so that a
// rerun on unchanged kernels rewrites identical bytes.
std::string receipt_text(const Json& receipt);

}  // namespace kgen
