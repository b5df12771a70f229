#include "kernel_plans.h"

#include "targets/target.h"

namespace kgen {

std::vector<KernelPlan> plan_kernels(const Spec& spec) {
  std::vector<KernelPlan> plans;
  for (const Target* target : targets())
    if (target->named_by(spec)) {
      plans.push_back(target->plan(spec));
      if (spec.backward)
        for (KernelPlan& backward : target->backward_plans(spec)) plans.push_back(std::move(backward));
    }
  return plans;
}

std::vector<std::string> targets_without_backward(const Spec& spec) {
  std::vector<std::string> missing;
  if (spec.backward)
    for (const Target* target : targets())
      if (target->named_by(spec) && target->backward_plans(spec).empty()) missing.push_back(target->name());
  return missing;
}

}  // namespace kgen
