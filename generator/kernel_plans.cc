#include "kernel_plans.h"

#include "diagnostics.h"
#include "targets/target.h"

namespace kgen {

std::vector<KernelPlan> plan_kernels(const Spec& spec) {
  std::vector<KernelPlan> plans;
  std::string no_decode;  // why each named target generates no decode kernel
  for (const Target* target : targets()) {
    if (!target->named_by(spec)) continue;
    if (spec.decode) {
      if (const std::optional<std::string> why = target->decode_unsupported(spec)) {
        no_decode += (no_decode.empty() ? "" : "; ") + *why;
        continue;
      }
    }
    plans.push_back(target->plan(spec));
    if (spec.decode)
      if (std::optional<KernelPlan> combine = target->decode_combine_plan(spec)) plans.push_back(std::move(*combine));
    if (spec.backward)
      for (KernelPlan& backward : target->backward_plans(spec)) plans.push_back(std::move(backward));
  }
  if (spec.decode && plans.empty())
    throw SpecError("targets", "no target with a decode kernel (" + no_decode + ")",
                    "a target that generates decode kernels (docs/decode.md)");
  return plans;
}

std::vector<std::string> targets_without_decode(const Spec& spec) {
  std::vector<std::string> missing;
  if (spec.decode)
    for (const Target* target : targets())
      if (target->named_by(spec) && target->decode_unsupported(spec)) missing.push_back(target->name());
  return missing;
}

std::vector<std::string> targets_without_backward(const Spec& spec) {
  std::vector<std::string> missing;
  if (spec.backward)
    for (const Target* target : targets())
      if (target->named_by(spec) && target->backward_plans(spec).empty()) missing.push_back(target->name());
  return missing;
}

}  // namespace kgen
