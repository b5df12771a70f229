// The dense float64 reference of docs/spec-format.md §3: what every generated kernel must
// compute, written as literally as possible so that it can be trusted without a reference
// of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "spec.h"

namespace kgen {

// Row-major flat arrays. The reference takes values as given: a caller comparing against
// a kernel rounds them to the kernel's dtype first (round_inputs), so both see the same.
struct AttentionInputs {
  std::vector<double> q;  // [batch][q_heads][q_len][head_dim]
  std::vector<double> k;  // [batch][kv_heads][kv_len][head_dim]
  std::vector<double> v;  // [batch][kv_heads][kv_len][head_dim_v]
  std::vector<int32_t> q_segment_ids;   // [batch][q_len]; empty unless spec.segment_ids
  std::vector<int32_t> kv_segment_ids;  // [batch][kv_len]; empty unless spec.segment_ids
  std::vector<float> sinks;  // [q_heads]; empty unless spec.sinks (kernels take f32 sinks)
};

struct AttentionOutputs {
  std::vector<double> out;  // [batch][q_heads][q_len][head_dim_v]
  std::vector<double> lse;  // [batch][q_heads][q_len]; -inf on rows with nothing to attend
};

// Throws std::invalid_argument naming the array whose size does not fit spec.shape, or
// that is present (absent) although the spec does not (does) ask for it.
void check_attention_inputs(const Spec& spec, const AttentionInputs& inputs);

// Selects query rows (batch, head, row) to compute; the others are left 0.
using RowFilter = std::function<bool(int64_t b, int64_t h, int64_t i)>;

// docs/spec-format.md §3 in float64. Always computes lse, whatever spec.lse says. The
// mask is evaluated per element with Mask::allowed, independently of the block plan it
// checks. With `only`, just the selected rows: what sampled verification of a large spec
// needs.
AttentionOutputs dense_attention(const Spec& spec, const AttentionInputs& inputs,
                                 const RowFilter& only = {});

// The run-time inputs of a decode kernel (docs/spec-format.md §8, docs/decode.md).
struct DecodeInputs {
  std::vector<double> q;  // [batch][q_heads][q_len][head_dim]: the new tokens
  // The cache. Contiguous: [batch][kv_heads][kv_len][head_dim] (v: head_dim_v), as the forward's.
  // Paged: a pool [kv_heads][pages][page_size][head_dim]; position p of sequence b lies in page
  // page_table[b][p / page_size], at row p % page_size.
  std::vector<double> k;
  std::vector<double> v;
  std::vector<int32_t> kv_lens;     // [batch]: valid positions, the new tokens included; in [q_len, kv_len]
  std::vector<int32_t> page_table;  // [batch][kv_len / page_size]; empty unless paged
  std::vector<float> sinks;         // [q_heads]; empty unless spec.sinks
};

// Throws std::invalid_argument naming the array whose size or values do not fit the spec: a
// kv_lens entry outside [q_len, kv_len], a page index outside the pool.
void check_decode_inputs(const Spec& spec, const DecodeInputs& inputs);

// docs/spec-format.md §8 in float64: new token t of sequence b is query position
// kv_lens[b] - q_len + t of the spec's mask (causal or local), over the cache positions below
// kv_lens[b]. out [batch][q_heads][q_len][head_dim_v], lse [batch][q_heads][q_len], always.
AttentionOutputs dense_decode(const Spec& spec, const DecodeInputs& inputs);

// The partial results of a split decode kernel: for each of `rows` rows, `splits` parts, each
// an out_s [head_dim_v] and an lse_s (-inf for a part that kept nothing).
struct SplitPartials {
  int64_t rows = 0;
  int64_t splits = 0;
  int64_t head_dim_v = 0;
  std::vector<double> out;    // [rows][splits][head_dim_v]
  std::vector<double> lse;    // [rows][splits]
  std::vector<double> sinks;  // [rows]: the row's q head's sink; empty without sinks
};

// docs/spec-format.md §8's combine in float64: lse = log Σ_s exp(lse_s), out = Σ_s exp(lse_s -
// lse) · out_s, with the sink as one more part of out 0 when present. A row with no part kept
// and no sink gets out 0 and lse -inf. out [rows][head_dim_v], lse [rows].
AttentionOutputs dense_combine(const SplitPartials& partials);

}  // namespace kgen
