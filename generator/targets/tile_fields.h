// Reading a target section's tile fields, which may be "auto" (docs/tuning.md): the value as
// written, or a placeholder 0 with the field recorded in Spec::auto_tiles for
// resolve_auto_tiles (auto_tiles.h) to fill in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "json_fields.h"
#include "spec.h"

namespace kgen {

// `key` of `fields`, an integer in [1, max] or "auto"; `recorded_as` is its name under
// "targets.<target>" ("block_q", "backward.block_kv").
int64_t required_tile(JsonFields& fields, const std::string& key, int64_t max, Spec& spec, const std::string& target,
                      const std::string& recorded_as);
// The same for a field that may be absent (nothing returned then).
std::optional<int64_t> optional_tile(JsonFields& fields, const std::string& key, int64_t max, Spec& spec,
                                     const std::string& target, const std::string& recorded_as);

// Whether the spec wrote `field` of `target` as "auto".
bool is_auto_tile(const Spec& spec, const std::string& target, const std::string& field);

}  // namespace kgen
