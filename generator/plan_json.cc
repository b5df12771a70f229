#include "plan_json.h"

#include "diagnostics.h"
#include "targets/target.h"

namespace kgen {

Json plan_json(const Spec& spec, const std::string& target, const std::string& pass) {
  const Target& named = named_target(spec, target);
  for (PlanPass known : {PlanPass::kForward, PlanPass::kDq, PlanPass::kDkv, PlanPass::kDecode})
    if (pass == plan_pass_name(known)) return named.plan_json(spec, known);
  throw SpecError("--pass", "\"" + pass + "\"", "forward, dq, dkv or decode");
}

}  // namespace kgen
