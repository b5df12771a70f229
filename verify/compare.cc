#include "compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kgen {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void require_same_size(const std::vector<double>& actual, const std::vector<double>& reference,
                       const char* name) {
  if (actual.size() != reference.size())
    throw std::invalid_argument(std::string(name) + ": " + std::to_string(actual.size()) +
                                " values to compare with a reference of " +
                                std::to_string(reference.size()));
}

// Equal values (equal infinities included) differ by 0; otherwise a NaN or an infinity
// on either side is an infinite difference, which `>` below must not skip the way it
// skips NaN.
double difference(double a, double b) {
  if (a == b) return 0;
  const double diff = std::fabs(a - b);
  return std::isfinite(diff) ? diff : kInfinity;
}

// The largest difference and where it is; -1 when everything matches exactly.
double max_difference(const std::vector<double>& actual, const std::vector<double>& reference,
                      int64_t* worst_index) {
  double worst = 0;
  int64_t where = -1;
  for (std::size_t n = 0; n < actual.size(); ++n) {
    const double diff = difference(actual[n], reference[n]);
    if (diff > worst) {
      worst = diff;
      where = static_cast<int64_t>(n);
    }
  }
  if (worst_index) *worst_index = where;
  return worst;
}

}  // namespace

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16: return kBFloat16Tolerance;
    case DType::kFloat16: return kFloat16Tolerance;
    case DType::kFloat32: return kFloat32Tolerance;
  }
  return kFloat32Tolerance;
}

double backward_tolerance(DType dtype) { return dtype == DType::kFloat32 ? 1e-4 : 3e-2; }

double relative_out_error(const std::vector<double>& actual, const std::vector<double>& reference,
                          int64_t* worst_index) {
  require_same_size(actual, reference, "out");
  const double diff = max_difference(actual, reference, worst_index);
  double scale = 0;
  for (double r : reference) scale = std::max(scale, std::fabs(r));
  if (diff == 0) return 0;
  return scale > 0 ? diff / scale : kInfinity;
}

double absolute_lse_error(const std::vector<double>& actual, const std::vector<double>& reference,
                          int64_t* worst_index) {
  require_same_size(actual, reference, "lse");
  return max_difference(actual, reference, worst_index);
}

Comparison compare_outputs(const AttentionOutputs& actual, const AttentionOutputs& reference) {
  Comparison c;
  c.out_error = relative_out_error(actual.out, reference.out, &c.worst_out_index);
  c.lse_error = absolute_lse_error(actual.lse, reference.lse, &c.worst_lse_index);
  return c;
}

}  // namespace kgen
