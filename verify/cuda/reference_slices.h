// Checking a large kernel against the float64 reference one kv-head group at a time: the
// reference of slice (b, g) is the reference of a spec with batch 1 and one kv head, whose
// q heads are the group of q heads that read kv head g, on that part of the inputs. Slices
// are independent, so the harness computes them in parallel, or only some of them.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dense_reference.h"
#include "spec.h"

namespace kgen {

struct SliceId {
  int64_t batch;
  int64_t kv_head;
};

// Every (batch, kv head) slice in order.
std::vector<SliceId> all_slices(const Spec& spec);

// The spec of one slice: batch 1, kv_heads 1, q_heads = group, the masks of those q heads.
Spec slice_spec(const Spec& spec, const SliceId& id);

// The slice's part of `inputs` (q heads of the group, kv head g, batch b, their sinks and
// segment ids), laid out for slice_spec.
AttentionInputs slice_inputs(const Spec& spec, const AttentionInputs& inputs, const SliceId& id);

// The slice's part of full-size outputs, laid out for slice_spec (lse may be empty).
AttentionOutputs slice_outputs(const Spec& spec, const AttentionOutputs& outputs, const SliceId& id);

// A block of `rows` consecutive q rows of one (batch, q head): rows [q_block * rows, +rows).
struct QBlock {
  int64_t batch;
  int64_t head;
  int64_t q_block;
};

// The q blocks of `rows` rows (the last one may be shorter) in which `touched(flat_row)` holds
// for some row, flat_row = (batch * q_heads + head) * q_len + i: what a sampled run of a
// persistent kernel produced, each block by one work item.
std::vector<QBlock> touched_q_blocks(const Spec& spec, int64_t rows, const std::function<bool(int64_t)>& touched);

// The rows of slice outputs (laid out for slice_spec: [group][q_len]) that `keep(head in the
// group, i)` selects, in order.
AttentionOutputs select_slice_rows(const Spec& slice, const AttentionOutputs& outputs,
                                   const std::function<bool(int64_t, int64_t)>& keep);

// The (i, j) pairs the masks and segment ids keep, over all batch elements and heads: the
// work an attention kernel must do (for effective TFLOP/s). Segment ids may be empty when
// the spec has none.
double kept_pairs(const Spec& spec, const std::vector<int32_t>& q_segment_ids,
                  const std::vector<int32_t>& kv_segment_ids);

}  // namespace kgen
