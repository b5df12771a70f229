#include "tiling_candidates.h"

#include <algorithm>
#include <cmath>

#include "receipts.h"

namespace kgen {
namespace {

double distance(const TileChoice& tiles, const TileChoice& preferred) {
  double sum = 0;
  for (const auto& [field, value] : tiles) {
    const auto want = preferred.find(field);
    if (want != preferred.end() && want->second > 0 && value > 0)
      sum += std::fabs(std::log2(static_cast<double>(value)) - std::log2(static_cast<double>(want->second)));
  }
  return sum;
}

double volume(const TileChoice& tiles) {
  double product = 1;
  for (const auto& [field, value] : tiles) product *= static_cast<double>(value);
  return product;
}

}  // namespace

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  for (int64_t v = lo; v > 0 && v <= hi; v *= 2) values.push_back(v);
  return values;
}

std::vector<TileChoice> tiling_combinations(const TuningSpace& space, const TileChoice& fixed) {
  std::vector<TileChoice> all = {TileChoice{}};
  for (const TileAxis& axis : space.axes) {
    std::vector<TileChoice> grown;
    const auto pinned = fixed.find(axis.field);
    for (const TileChoice& partial : all)
      for (int64_t value : axis.values) {
        if (pinned != fixed.end() && pinned->second != value) continue;
        TileChoice next = partial;
        next[axis.field] = value;
        grown.push_back(std::move(next));
      }
    // A value written in the spec that the axis does not list is still the only choice.
    if (pinned != fixed.end() && std::find(axis.values.begin(), axis.values.end(), pinned->second) == axis.values.end())
      for (const TileChoice& partial : all) {
        TileChoice next = partial;
        next[axis.field] = pinned->second;
        grown.push_back(std::move(next));
      }
    all = std::move(grown);
  }
  if (space.skip) all.erase(std::remove_if(all.begin(), all.end(), space.skip), all.end());
  std::stable_sort(all.begin(), all.end(), [&](const TileChoice& a, const TileChoice& b) {
    const double da = distance(a, space.preferred), db = distance(b, space.preferred);
    if (std::fabs(da - db) > 1e-9) return da < db;
    const double va = volume(a), vb = volume(b);
    if (va != vb) return va > vb;
    return b < a;  // larger values in field order first
  });
  return all;
}

Spec with_tiles(const Spec& spec, const Target& target, TilePass pass, const TileChoice& tiles) {
  Spec copy = spec;
  target.set_tiles(copy, pass, tiles);
  return copy;
}

std::optional<TilingViolation> check_pass_tiles(const Spec& spec, const Target& target, TilePass pass,
                                                const TileChoice& tiles) {
  const Spec copy = with_tiles(spec, target, pass, tiles);
  if (pass == TilePass::kBackward) return target.check_backward_tiling(copy, target.backward_tiling(copy));
  std::optional<TilingViolation> refused = target.check_tiling(copy, target.tiling(copy));
  // A decode tiling the target writes no kernel for (kgen gen notes it and writes the other
  // targets') has nothing to measure and is no choice for "auto".
  if (!refused && pass == TilePass::kDecode)
    if (std::optional<std::string> why = target.decode_unsupported(copy))
      refused = TilingViolation{std::string("targets.") + target.name(), describe_tiles(tiles),
                                "a tiling it generates a decode kernel for: " + *why};
  return refused;
}

Candidates legal_tilings(const Spec& spec, const Target& target, TilePass pass, const TuningSpace& space,
                         const TileChoice& fixed, bool stop_at_first) {
  Candidates result;
  const std::vector<TileChoice> combinations = tiling_combinations(space, fixed);
  result.combinations = static_cast<int64_t>(combinations.size());
  for (const TileChoice& tiles : combinations) {
    std::optional<TilingViolation> refused = check_pass_tiles(spec, target, pass, tiles);
    if (refused) {
      if (!result.first_refusal) result.first_refusal = std::move(refused);
      continue;
    }
    result.legal.push_back(tiles);
    if (stop_at_first) break;
  }
  return result;
}

std::string candidates_digest(const std::vector<TileChoice>& legal) {
  std::string text;
  for (const TileChoice& tiles : legal) text += describe_tiles(tiles) + "\n";
  return sha256_hex(text);
}

}  // namespace kgen
