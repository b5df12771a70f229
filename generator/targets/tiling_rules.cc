#include "targets/tiling_rules.h"

namespace kgen {

std::string kib(int64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

void TilingRules::require(bool holds, const std::string& field, const std::string& found,
                          const std::string& expected) {
  if (!holds && !first_) first_ = TilingViolation{prefix_ + field, found, expected};
}

void TilingRules::multiple(const std::string& field, int64_t value, int64_t of, const std::string& why) {
  require(value > 0 && value % of == 0, field, std::to_string(value),
          "a multiple of " + std::to_string(of) + " (" + why + ")");
}

void TilingRules::divides(const std::string& field, int64_t value, const std::string& len_name, int64_t len) {
  require(value > 0 && len % value == 0, field, std::to_string(value),
          "a divisor of " + len_name + " = " + std::to_string(len));
}

}  // namespace kgen
