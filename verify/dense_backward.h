// The dense float64 gradients of docs/spec-format.md §7: what every generated backward kernel
// must compute, written as literally as the forward reference (dense_reference.h) and checked
// against central finite differences of it (tests/reference/backward_test.cc).
#pragma once

#include <functional>
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

// Which gradient rows to compute; the others are left 0. Sampled verification of a large spec
// checks some rows of dq and of dk/dv, and dsinks over some (batch, head) pairs.
struct GradientRows {
  std::function<bool(int64_t b, int64_t h, int64_t i)> dq;         // a row of dq
  std::function<bool(int64_t b, int64_t kv_head, int64_t j)> dkv;  // a row of dk and dv
  std::function<bool(int64_t b, int64_t h)> dsinks;                // a pair summed into dsinks[h]
};

// docs/spec-format.md §7 in float64, from the residuals as given (a kernel's caller passes
// the forward kernel's own out and lse). Rows whose lse is -inf contribute nothing. With
// `only`, just the selected rows (a residual row is read only where a selected gradient row
// needs it). Throws std::invalid_argument like dense_attention on arrays that do not fit.
AttentionGradients dense_attention_backward(const Spec& spec, const AttentionInputs& inputs,
                                            const BackwardResiduals& residuals, const GradientRows& only = {});

}  // namespace kgen
