// Judging a kernel's outputs against the reference with docs/spec-format.md §3's tolerances.
#pragma once

#include <cstdint>
#include <vector>

#include "dense_reference.h"
#include "spec.h"

namespace kgen {

struct Tolerance {
  double out_relative;  // on max |out - ref| / max |ref|
  double lse_absolute;  // on max |lse - ref|
};

// docs/spec-format.md §3. The contract gives float32 only an out tolerance; lse is
// bounded as tightly as out because the statistics are f32 for every dtype and f32 inputs
// add no rounding of their own.
inline constexpr Tolerance kFloat32Tolerance{1e-5, 1e-5};
inline constexpr Tolerance kBFloat16Tolerance{2e-2, 1e-3};
inline constexpr Tolerance kFloat16Tolerance{2e-2, 1e-3};

Tolerance tolerance_for(DType dtype);

// docs/spec-format.md §7: on max |x - ref| / max |ref| per gradient tensor (dq, dk, dv, dsinks).
double backward_tolerance(DType dtype);

struct Comparison {
  double out_error = 0;  // max |out - ref| / max |ref|
  double lse_error = 0;  // max |lse - ref|, with -inf == -inf counting as 0
  int64_t worst_out_index = -1;  // flat index of the largest out error; -1 when none
  int64_t worst_lse_index = -1;

  bool within(const Tolerance& tolerance) const {
    return out_error <= tolerance.out_relative && lse_error <= tolerance.lse_absolute;
  }
};

// Any NaN, and any infinity that the reference does not have at the same place, is an
// infinite error. When the reference is all zeros, an exact match is 0 and anything else
// infinite. Throws std::invalid_argument naming "out" or "lse" on a size mismatch.
double relative_out_error(const std::vector<double>& actual, const std::vector<double>& reference,
                          int64_t* worst_index = nullptr);
double absolute_lse_error(const std::vector<double>& actual, const std::vector<double>& reference,
                          int64_t* worst_index = nullptr);
Comparison compare_outputs(const AttentionOutputs& actual, const AttentionOutputs& reference);

}  // namespace kgen
