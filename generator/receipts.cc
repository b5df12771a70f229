#include "receipts.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <set>

#include "runtime_files.h"
#include "targets/target.h"
#include "text_files.h"

namespace kgen {

std::optional<ReceiptRule> receipt_rule(const std::string& target) {
  const Target* found = find_target(target);
  return found ? std::optional<ReceiptRule>(found->receipt_rule()) : std::nullopt;
}

std::string ReceiptPaths::receipt_file(const std::string& name, const std::string& target) const {
  return receipts + "/" + name + "." + target + ".json";
}

std::string ReceiptPaths::kernel_folder(const std::string& name) const { return generated + "/" + name; }

std::string sha256_hex(const std::string& bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)), /*LowerCase=*/true);
}

namespace {

// The runtime folders ("sm90a", "decode/sm90a") the kernel files named by `files` were rendered
// with, as their MANIFEST.json entries' provenance names them (a decode kernel includes
// runtime/decode/ beside its target's folders, runtime_files.h); the rule's folders where the
// manifest names none.
std::vector<std::string> rendered_runtime(const ReceiptPaths& paths, const std::string& name,
                                          const std::vector<std::string>& files, const ReceiptRule& rule) {
  const auto text = read_text_file(paths.kernel_folder(name) + "/MANIFEST.json");
  const Json manifest = text ? Json::parse(*text, nullptr, /*allow_exceptions=*/false) : Json();
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) return rule.runtime;
  std::set<std::string> folders;
  const std::string prefix = "runtime/";
  for (const std::string& file : files) {
    const Json entry = manifest["files"].value(file, Json::object());
    if (!entry.is_object() || !entry.contains("runtime") || !entry["runtime"].is_object()) continue;
    for (const Json& folder : entry["runtime"].value("folders", Json::array()))
      if (folder.is_string() && folder.get<std::string>().starts_with(prefix))
        folders.insert(folder.get<std::string>().substr(prefix.size()));
  }
  if (folders.empty()) return rule.runtime;
  return {folders.begin(), folders.end()};
}

}  // namespace

FileHashes hash_kernel_files(const ReceiptPaths& paths, const std::string& name, const ReceiptRule& rule) {
  FileHashes hashes;
  std::vector<std::string> suffixes = rule.file_suffixes;
  suffixes.insert(suffixes.end(), rule.backward_file_suffixes.begin(), rule.backward_file_suffixes.end());
  suffixes.insert(suffixes.end(), rule.combine_file_suffixes.begin(), rule.combine_file_suffixes.end());
  std::vector<std::string> files;
  for (const std::string& suffix : suffixes) {
    const std::string file = name + suffix;
    if (const auto bytes = read_text_file(paths.kernel_folder(name) + "/" + file)) {
      hashes[file] = sha256_hex(*bytes);
      files.push_back(file);
    }
  }
  for (const RuntimeFile& file : read_runtime_files(paths.root, rendered_runtime(paths, name, files, rule)))
    hashes[file.path] = sha256_hex(file.content);
  return hashes;
}

Json with_check(const Json& receipt, const ReceiptHeader& header, const FileHashes& current, const std::string& check,
                Json facts) {
  const Json files(current);
  Json result = {{"kernel", header.name},
                 {"target", header.target},
                 {"spec", header.spec},
                 {"regenerate", "make verify SPEC=" + header.spec},
                 {"note", "written by kgen receipt add for make verify; regenerate it, never edit it (docs/receipts.md)"},
                 {"files", files},
                 {"checks", Json::object()}};
  if (receipt.is_object() && receipt.contains("checks") && receipt["checks"].is_object())
    for (const auto& [name, section] : receipt["checks"].items())
      if (name != check && section.is_object() && section.value("files", Json()) == files)
        result["checks"][name] = section;
  facts["files"] = files;
  result["checks"][check] = std::move(facts);
  return result;
}

ReceiptStatus receipt_status(const std::optional<Json>& receipt, const FileHashes& current, const ReceiptRule& rule) {
  ReceiptStatus status;
  if (!receipt) {
    status.reasons.push_back("no receipt");
    return status;
  }
  const Json& r = *receipt;
  if (!r.is_object() || !r.contains("files") || !r["files"].is_object() || !r.contains("checks") ||
      !r["checks"].is_object()) {
    status.kind = ReceiptStatus::kInvalid;
    status.reasons.push_back("not a receipt: expected an object with objects \"files\" and \"checks\"");
    return status;
  }
  const Json& files = r["files"];
  for (const auto& [file, hash] : current) {
    if (!files.contains(file))
      status.reasons.push_back(file + " is not covered by the receipt");
    else if (files[file] != hash)
      status.reasons.push_back(file + " changed since the receipt was written (sha256 " + hash.substr(0, 12) +
                               ", receipt " + files[file].dump().substr(1, 12) + ")");
  }
  for (const auto& [file, hash] : files.items())
    if (!current.count(file)) status.reasons.push_back("the receipt covers " + file + ", which does not exist");
  // Sections whose bytes differ from the receipt's own only arise from editing by hand.
  if (status.reasons.empty())
    for (const auto& [name, section] : r["checks"].items())
      if (!section.is_object() || section.value("files", Json()) != files)
        status.reasons.push_back("check " + name + " ran on other bytes than the receipt covers");
  for (const auto& [name, section] : r["checks"].items())
    status.checks.push_back(name + (section.is_object() && section.value("passed", false) ? " passed" : " FAILED"));
  if (!status.reasons.empty()) {
    status.kind = ReceiptStatus::kStale;
    return status;
  }
  for (const std::string& check : rule.required)
    if (!r["checks"].contains(check)) status.reasons.push_back("no " + check + " check");
  status.kind = status.reasons.empty() ? ReceiptStatus::kCurrent : ReceiptStatus::kIncomplete;
  return status;
}

std::optional<Json> read_receipt(const std::string& path) {
  const auto text = read_text_file(path);
  if (!text) return std::nullopt;
  try {
    return Json::parse(*text);
  } catch (const Json::parse_error& error) {
    throw std::runtime_error(path + ": not JSON: " + error.what());
  }
}

ReceiptStatus kernel_receipt_status(const ReceiptPaths& paths, const std::string& name, const std::string& target,
                                    const ReceiptRule& rule) {
  const FileHashes current = hash_kernel_files(paths, name, rule);
  try {
    return receipt_status(read_receipt(paths.receipt_file(name, target)), current, rule);
  } catch (const std::runtime_error& error) {
    ReceiptStatus status;
    status.kind = ReceiptStatus::kInvalid;
    status.reasons.push_back(error.what());
    return status;
  }
}

const char* status_name(ReceiptStatus::Kind kind) {
  switch (kind) {
    case ReceiptStatus::kCurrent: return "current";
    case ReceiptStatus::kIncomplete: return "incomplete";
    case ReceiptStatus::kStale: return "stale";
    case ReceiptStatus::kMissing: return "missing";
    case ReceiptStatus::kInvalid: return "invalid";
  }
  return "?";
}

std::string receipt_text(const Json& receipt) { return receipt.dump(2) + "\n"; }

}  // namespace kgen
