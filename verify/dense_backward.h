// The dense float64 gradients of docs/spec-format.md §7: what every generated backward kernel
// must compute, written as literally as the forward reference (dense_reference.h) and checked
// against central finite differences of it (tests/reference/backward_test.cc).
#pragma once

#include <vector>

#include "dense_reference.h"

namespace kgen {

// What the backward kernels read besides the forward's inputs: the forward's out and lse (its
// residuals) and the incoming gradient dout. Row-major like AttentionInputs.
struct BackwardResiduals {
  std::vector<double> out;   // [batch][q_heads][q_len][head_dim_v]
  std::vector<double> lse;   // [batch][q_heads][q_len]; -inf on rows with nothing to attend
  std::vector<double> dout;  // [batch][q_heads][q_len][head_dim_v]
};

struct AttentionGradients {
  std::vector<double> dq;      // [batch][q_heads][q_len][head_dim]
  std::vector<double> dk;      // [batch][kv_heads][kv_len][head_dim], summed over each group
  std::vector<double> dv;      // [batch][kv_heads][kv_len][head_dim_v], summed over each group
  std::vector<double> dsinks;  // [q_heads]; empty unless spec.sinks
};

// docs/spec-format.md §7 in float64, from the residuals as given (a kernel's caller passes
// the forward kernel's own out and lse). Rows whose lse is -inf contribute nothing. Throws
// std::invalid_argument like dense_attention on arrays that do not fit the spec.
AttentionGradients dense_attention_backward(const Spec& spec, const AttentionInputs& inputs,
                                            const BackwardResiduals& residuals);

}  // namespace kgen
