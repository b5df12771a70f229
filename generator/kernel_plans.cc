#include "kernel_plans.h"

#include "targets/target.h"

namespace kgen {

std::vector<KernelPlan> plan_kernels(const Spec& spec) {
  std::vector<KernelPlan> plans;
  for (const Target* target : targets())
    if (target->named_by(spec)) plans.push_back(target->plan(spec));
  return plans;
}

}  // namespace kgen
