// Deterministic inputs for checking a kernel against the reference, built so that every
// feature of docs/spec-format.md §3 changes the outputs visibly: a kernel that drops the
// softcap, a sink, the rescale, the max subtraction or the segment comparison fails.
// Shared by the tpu CPU verifier, the GPU harness and every later pass; docs/verification.md
// says how each feature is made visible.
#pragma once

#include <cstdint>

#include "dense_reference.h"
#include "spec.h"

namespace kgen {

// Every query row gets one of three logit profiles, the same structure on every machine:
//   flat     s[j] = scale * q.k of uniform noise: |s| well under 1, softmax spread wide;
//   rising   s[j] grows along kv by `span` from -span to +span: the row max moves at every
//            kv block (a dropped rescale shows), and for 16-bit dtypes without a softcap it
//            passes 88.7, where exp without the max subtraction overflows f32;
//   falling  the mirror image: the max sits in the first kv block of the row.
// The structure is rank one per kv head: q = noise + a_i w and k = noise + c_j w for a sign
// vector w of each (batch, kv head), so scale * q.k = a_i c_j scale |w|^2 + noise terms, with
// c_j ramping from -1 to 1 along kv; q or k read from the wrong batch or head lose it.
struct InputDesign {
  double span = 0;          // the largest |logit| a rising or falling row reaches, roughly
  double sink_center = 0;   // sinks are sink_center + uniform(-3, 3)
  int64_t short_document = 0;  // segment ids: the first 5/16 of a row packs documents
                               // of 1..short_document tokens
};

// What `verification_inputs` will use for this spec:
//   softcap c set:           span 6c (over half of the rising/falling logits lie beyond ±2c);
//   16-bit, no softcap:      span 120 (past exp's f32 overflow at 88.7);
//   float32, no softcap:     span 12 (f32's 1e-5 tolerance is about one ulp of a logit of
//                            100 accumulated over head_dim products; overflow is shown by the
//                            16-bit kernels instead).
// Sinks are centred on ln(kv_len) + 1: above every logit of the short and flat rows (the sink
// dominates there), far below the late logits of rising rows (negligible there).
InputDesign input_design(const Spec& spec);

// The same (spec, seed) gives the same inputs on every machine and standard library. q, k
// and v are rounded to spec.dtype and never 0; v is uniform in (-1, 1). Sinks are f32.
// Segment ids: in the first 5/16 of each row (1/3 in odd batch rows) many short documents
// (log-uniform lengths from 1 to short_document tokens), then one document to 17/32 of the
// row (25/32) and one filling the rest, longer than a local window; the kv side has the q side's boundaries (scaled when
// kv_len differs), except that about one boundary in six is moved by up to 8 tokens and one
// short document in eight is absent from kv (its rows have nothing to attend). Document n
// has id 2n, on the kv side 2n + 1 where it is absent, so ids grow along both sides.
AttentionInputs verification_inputs(const Spec& spec, uint64_t seed);

// The incoming gradient dout [batch][q_heads][q_len][head_dim_v] of a backward verification:
// uniform in (-1, 1), rounded to spec.dtype, from its own stream of `seed`.
std::vector<double> verification_dout(const Spec& spec, uint64_t seed);

// A decode check's inputs (docs/spec-format.md §8, docs/verification.md "Decode"): q (the new
// tokens) and the cache drawn as verification_inputs draws the forward's q, k and v (rising and
// falling rows across the cache, sinks); kv_lens as given; every cache position at or past
// kv_lens[b] overwritten with large finite values, so a kernel that reads past a sequence's
// length without masking it fails; for a paged spec, the cache scattered into a pool through a
// page table that is a seeded permutation of the pool (no sequence's pages in order), the
// pages no table names filled with the same large values.
DecodeInputs decode_verification_inputs(const Spec& spec, const std::vector<int32_t>& kv_lens, uint64_t seed);

// The lengths a decode check covers: q_len (one token's worth: kv_lens of 1 when q_len is 1),
// each of `edges` (kv block and page sizes and their multiples) and its neighbours ±1, and the
// full capacity kv_len; within [q_len, kv_len], ascending, each once.
std::vector<int32_t> decode_length_cases(const Spec& spec, const std::vector<int64_t>& edges);

// The edges every decode check covers for a kernel of `block_kv` (docs/decode.md "Checking"):
// the ends of the first two and the last kv blocks, of the first two pages, and where a window's
// first block moves past block 0. decode_length_cases(spec, decode_length_edges(...)).
std::vector<int64_t> decode_length_edges(const Spec& spec, int64_t block_kv);

// Values past kv_lens[b] may be anything (docs/spec-format.md §8): besides the large keys
// decode_verification_inputs leaves there (an unmasked score shows), every such value row (and
// every pool row no sequence reads below its length) becomes NaN, so a kernel that multiplies a
// masked position's p = 0 by its value fails too. Call after the reference is computed.
void poison_stale_values(const Spec& spec, DecodeInputs& inputs);

}  // namespace kgen
