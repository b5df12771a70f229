#include "targets/tile_fields.h"

#include "diagnostics.h"

namespace kgen {

std::optional<int64_t> optional_tile(JsonFields& fields, const std::string& key, int64_t max, Spec& spec,
                                     const std::string& target, const std::string& recorded_as) {
  if (!fields.has(key)) return std::nullopt;
  const Json& value = fields.raw(key);
  if (value.is_string()) {
    if (value.get<std::string>() != "auto")
      throw SpecError(fields.path_of(key), describe_value(value),
                      "an integer in [1, " + std::to_string(max) + "] or \"auto\" (docs/tuning.md)");
    spec.auto_tiles[target].insert(recorded_as);
    return 0;
  }
  return fields.required_int(key, 1, max);
}

int64_t required_tile(JsonFields& fields, const std::string& key, int64_t max, Spec& spec, const std::string& target,
                      const std::string& recorded_as) {
  if (!fields.has(key)) return fields.required_int(key, 1, max);  // the missing-key error
  return *optional_tile(fields, key, max, spec, target, recorded_as);
}

bool is_auto_tile(const Spec& spec, const std::string& target, const std::string& field) {
  const auto found = spec.auto_tiles.find(target);
  return found != spec.auto_tiles.end() && found->second.count(field) > 0;
}

}  // namespace kgen
