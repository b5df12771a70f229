// The tpu target's kernel plan: the Splash-style Mosaic kernel's operands, types,
// constants and mask predicate, as the context of templates/tpu/forward/kernel.mlir.tmpl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_plan.h"
#include "kernel_plans.h"
#include "spec.h"
#include "targets/tpu/mosaic_text.h"

namespace kgen {

// The tile schedule of the tpu target (Splash's MaskInfo) at the spec's tiling.
SplashPlan tpu_splash_plan(const Spec& spec);

// For a spec whose tiling passed the tpu target's check_tiling.
KernelPlan plan_tpu_kernel(const Spec& spec);

// The window of an operand of a kernel walking the forward's plan (the forward, dq): its
// index map kind, one of by_q_block, by_kv_block, q_ids, kv_ids, partial_mask, whole.
TpuWindow forward_walk_window(const TpuOperand& op);
const std::vector<std::string>& forward_walk_window_kinds();

// What every tpu kernel takes first: the plan's scalar-prefetch tables (data_next, block_mask,
// mask_next when the plan has one), then q, k and v windowed at block_q and block_kv.
std::vector<TpuOperand> tpu_plan_and_qkv(const Spec& spec, int64_t block_q, int64_t block_kv, const SplashPlan& plan);

// The inputs of a kernel walking the forward's plan (the forward, dq) besides out, dout and
// lse: tpu_plan_and_qkv, then segment ids (q ids lane-replicated, kv ids a row), sinks and
// the plan's partial mask blocks, as the spec has them.
std::vector<TpuOperand> tpu_forward_walk_inputs(const Spec& spec, int64_t block_q, int64_t block_kv,
                                                const SplashPlan& plan);

// The MLIR types of the q, k, v, out and lse windows and tiles (k and v loaded per
// block_kv_compute sub-tile), keyed as the templates name them: q_memref, q_window, q_tile, ...
Json tpu_tile_types(const Spec& spec, int64_t block_q, int64_t block_kv, int64_t block_kv_compute);

// The types tpu/forward/scores.mlir.tmpl reads besides tpu_tile_types' (the forward and dq
// kernels' score tiles): the partial mask block and segment-id windows.
Json forward_walk_mask_types(int64_t block_q, int64_t block_kv, int64_t block_kv_compute);

// The copies of a live grid step that a kernel walking `plan` carries, as its template reads
// them: `partial_path` holds `partial_copy` (the copy that evaluates the mask) when the plan
// has a partial tile, `full_path` holds `full_copy` when it has a full tile, and `branch` is
// set when it has both, so that scf.if picks the copy once per step. A copy no step would run
// is not emitted: its code could never be executed (nor a mutant of it killed).
Json step_copies(const SplashPlan& plan, Json partial_copy, Json full_copy);

// The forward's scalar-prefetch tables of document ranges when the spec has segment ids
// (docs/block-plan.md, "Tiles skipped across documents"): q_block_ranges int32
// [batch][2][q blocks] and kv_block_ranges [batch][2][kv blocks], row 0 each block's smallest
// segment id, row 1 its largest (a partial last block over the positions it has). The plan
// has no table for them: the caller computes them from the run-time ids. Empty otherwise.
std::vector<TpuOperand> document_range_operands(const Spec& spec);

// Every operand of the kernel for `spec`, given its block plan: the plan's scalar-prefetch
// tables, document_range_operands, then the inputs, outputs and scratch.
std::vector<TpuOperand> tpu_operands(const Spec& spec, const SplashPlan& plan);

// The -0.7 * float32 max Splash uses for masked logits: finite, so exp() of a masked
// logit minus the running max is 0 without producing NaN.
float tpu_mask_value();

}  // namespace kgen
