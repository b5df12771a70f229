#include <algorithm>

#include "diagnostics.h"
#include "targets/target.h"
#include "targets/tile_fields.h"
#include "targets/tiling_rules.h"

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
    std::optional<TilingViolation> violation = target->check_tiling(spec, target->tiling(spec));
    if (!violation && spec.backward) violation = target->check_backward_tiling(spec, target->backward_tiling(spec));
    if (violation) throw SpecError(violation->path, violation->found, violation->expected);
  }
}

const char* plan_pass_name(PlanPass pass) {
  switch (pass) {
    case PlanPass::kForward: return "forward";
    case PlanPass::kDq: return "dq";
    case PlanPass::kDkv: return "dkv";
    case PlanPass::kDecode: return "decode";
  }
  return "?";
}

std::optional<BackwardTiles> parse_backward_tiles(JsonFields& target_fields, const Spec& spec,
                                                  bool has_block_kv_compute, Spec* autos, const std::string& target) {
  if (!target_fields.has("backward")) return std::nullopt;
  const std::string path = target_fields.path_of("backward");
  if (!spec.backward)
    throw SpecError(path, describe_value(target_fields.raw("backward")),
                    "no backward tiles unless the spec says \"backward\": true");
  JsonFields fields(target_fields.required_object("backward"), path);
  BackwardTiles tiles;
  // "auto" values only where the caller records them (docs/tuning.md).
  Spec ignored;
  Spec& into = autos ? *autos : ignored;
  auto tile = [&](const char* key) {
    if (!autos) return fields.required_int(key, 1, kMaxBlock);
    return required_tile(fields, key, kMaxBlock, into, target, std::string("backward.") + key);
  };
  tiles.block_q = tile("block_q");
  tiles.block_kv = tile("block_kv");
  if (has_block_kv_compute) {
    tiles.block_kv_compute =
        (autos ? optional_tile(fields, "block_kv_compute", kMaxBlock, into, target, "backward.block_kv_compute")
               : fields.optional_int("block_kv_compute", 1, kMaxBlock))
            .value_or(tiles.block_kv);
    if (autos && !fields.has("block_kv_compute") && is_auto_tile(into, target, "backward.block_kv"))
      into.auto_tiles[target].insert("backward.block_kv_compute");
    fields.reject_unknown({"block_q", "block_kv", "block_kv_compute"});
  } else {
    fields.reject_unknown({"block_q", "block_kv"});
  }
  return tiles;
}

}  // namespace kgen
