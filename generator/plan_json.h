// `kgen plan`: the block plan of one target as JSON (docs/spec-format.md §4).
#pragma once

#include <string>

#include "json_fields.h"
#include "spec.h"

namespace kgen {

// SpecError when the spec has no such target, or the pass ("forward", "dq", "dkv", "decode") is not one
// the target generates for this spec.
Json plan_json(const Spec& spec, const std::string& target, const std::string& pass);

}  // namespace kgen
