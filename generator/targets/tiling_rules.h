// The vocabulary of the targets' check_tiling: each rule records the first violation and
// ignores the rest, so a check reads as the list of its rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "targets/target.h"

namespace kgen {

// Largest block size a spec may write; a parse-level bound, far above every target's rules.
constexpr int64_t kMaxBlock = int64_t{1} << 14;

std::string kib(int64_t bytes);  // "227 KiB", rounded up

class TilingRules {
 public:
  explicit TilingRules(std::string path_prefix) : prefix_(std::move(path_prefix)) {}

  // value % of == 0 (and value > 0); `why` says what the multiple comes from.
  void multiple(const std::string& field, int64_t value, int64_t of, const std::string& why);
  // len % value == 0.
  void divides(const std::string& field, int64_t value, const std::string& len_name, int64_t len);
  // `holds`, else the violation of `field` with `found` and `expected` as written.
  void require(bool holds, const std::string& field, const std::string& found, const std::string& expected);
  // amount <= limit, reported as `found` / `expected`.
  void at_most(const std::string& field, int64_t amount, int64_t limit, const std::string& found,
               const std::string& expected) {
    require(amount <= limit, field, found, expected);
  }

  const std::optional<TilingViolation>& violation() const { return first_; }

 private:
  std::string prefix_;
  std::optional<TilingViolation> first_;
};

}  // namespace kgen
