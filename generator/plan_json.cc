#include "plan_json.h"

#include "targets/target.h"

namespace kgen {

Json plan_json(const Spec& spec, const std::string& target) { return named_target(spec, target).plan_json(spec); }

}  // namespace kgen
