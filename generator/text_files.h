// Reading files whole, and showing how a file differs from the text it should have: shared
// by the writer's stale check (kgen gen --check) and kgen-format --check.
#pragma once

#include <optional>
#include <string>

namespace kgen {

// The file's bytes, or nothing when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

// `diff -u` of the file at `path` (labelled `old_label`) against `expected` (labelled
// `new_label`); a one-line note instead when diff cannot run.
std::string unified_diff(const std::string& path, const std::string& old_label, const std::string& expected,
                         const std::string& new_label);

}  // namespace kgen
