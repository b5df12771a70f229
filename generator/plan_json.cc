#include "plan_json.h"

#include "block_plan.h"
#include "diagnostics.h"
#include "targets/target.h"

namespace kgen {

Json plan_json(const Spec& spec, const std::string& target) {
  const Target* found = find_target(target);
  if (!found || !found->named_by(spec))
    throw SpecError("--target", "\"" + target + "\"", "a target the spec names (under \"targets\")");
  return found->plan_json(spec);
}

}  // namespace kgen
