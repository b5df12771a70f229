// How the CUDA targets' plans spell things in generated source: float literals, numbers and
// phrases in comments, and the tables of the block plan laid out as initializer lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "spec.h"

namespace kgen {

// A float constant, rounded to f32 first: "7.21347520e+01f".
std::string cuda_float_literal(double value);

// A short human spelling of a double for comments: 0.0883883476, 50.
std::string short_number(double value);

// The score as a header comment writes it: "50 * tanh(0.0883883476 * q.k / 50)" or
// "0.0883883476 * q.k".
std::string score_formula(const Spec& spec);

// How the kernel masks its tiles, for its header comment; `bitmask` names the bitmask kind
// ("bitmask", "transposed bitmask").
std::string mask_strategy(PartialTileMask mask, bool segment_ids, const std::string& bitmask);

// The runtime's mask policies a Config names (runtime/cuda/masks.cuh): of the partial tiles,
// "kgen::cuda::PredicateMask<Config>" etc., and of segment ids. One spelling for every CUDA
// kernel: a policy reads its tile's coordinates through the kernel's register view.
std::string cuda_mask_policy(PartialTileMask mask);
std::string cuda_segment_mask_policy(bool segment_ids);

// The optional pointer operands of a kernel, in the order of its Params and Arguments: each is
// one pointer argument of the launcher and one member of Params. `checked`: with what the
// launcher checks its alignment by (the kernel file's context; the header only declares them).
class PointerOperands {
 public:
  explicit PointerOperands(bool checked) : checked_(checked) {}
  // Every optional operand holds 32-bit values (int32_t or float): 4-byte alignment.
  void add(const char* name, const char* type, const char* element, const char* description);
  const Json& json() const { return operands_; }

 private:
  bool checked_;
  Json operands_ = Json::array();
};

// Numbers as the lines of a C++ initializer, "1, 2, 3,\n4, 5": each line at most 94
// characters, so that with the template's 4-space indent and the closing "};" every line of a
// table fits the formatter's 100 columns. kgen lays tables out itself (the templates wrap them
// in clang-format off/on): the formatter's column layout of a long list is not a rule a reader
// can check.
std::string number_list(const std::vector<int64_t>& values);
std::string number_list(const std::vector<int32_t>& values);
// The same, as 32-bit hex words: "0x0000ffffu".
std::string hex_number_list(const std::vector<uint32_t>& values);

}  // namespace kgen
