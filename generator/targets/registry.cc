#include <algorithm>

#include "diagnostics.h"
#include "targets/target.h"

namespace kgen {

// Defined in generator/targets/<name>/target.cc.
const Target& tpu_target();
const Target& sm90a_target();
const Target& sm100a_target();

const std::vector<const Target*>& targets() {
  static const std::vector<const Target*> list = {&tpu_target(), &sm90a_target(), &sm100a_target()};
  return list;
}

const Target* find_target(const std::string& name) {
  for (const Target* target : targets())
    if (name == target->name()) return target;
  return nullptr;
}

const Target& named_target(const Spec& spec, const std::string& name) {
  const Target* found = find_target(name);
  if (!found || !found->named_by(spec))
    throw SpecError("--target", "\"" + name + "\"", "a target the spec names (under \"targets\")");
  return *found;
}

std::optional<TilingViolation> check_tiling(const Spec& spec, const std::string& target, const Tiling& tiling) {
  return named_target(spec, target).check_tiling(spec, tiling);
}

void check_target_constraints(const Spec& spec) {
  for (const Target* target : targets()) {
    if (!target->named_by(spec)) continue;
    if (const std::optional<TilingViolation> violation = target->check_tiling(spec, target->tiling(spec)))
      throw SpecError(violation->path, violation->found, violation->expected);
  }
}

}  // namespace kgen
