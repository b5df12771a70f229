// The tpu target's decode kernels (docs/decode.md): the split-KV kernel over a contiguous or
// paged cache, and the combine that merges its splits. Their shapes, operands and contexts for
// templates/tpu/decode/; the verifier and the benchmarks read the same numbers from here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_plans.h"
#include "spec.h"
#include "targets/tpu/mosaic_text.h"

namespace kgen {

// Every number of a tpu decode kernel, from its spec and split.
struct TpuDecodeShape {
  int64_t rows = 0;               // q tile: group x q_len, q head-major
  int64_t block_kv = 0;
  int64_t block_kv_compute = 0;
  int64_t subtiles = 0;           // block_kv / block_kv_compute
  int64_t splits = 1;
  int64_t kv_blocks = 0;          // the most blocks one sequence reads (decode_kv_blocks)
  int64_t steps = 0;              // the most blocks one split walks: ceil(kv_blocks / splits)
  int64_t page_size = 0;          // 0 when the cache is contiguous
  int64_t pages_per_block = 0;    // paged, block_kv >= page_size: one DMA per page
  int64_t blocks_per_page = 0;    // paged, block_kv < page_size: the block is part of one page
  int64_t dmas_per_block() const { return pages_per_block ? pages_per_block : 1; }  // for k, and as many for v
  std::vector<int64_t> grid() const;  // [batch, kv heads, splits]
  int64_t batch = 0;
  int64_t kv_heads = 0;
  // On a chip whose kernel runs on one TensorCore (v5e, v6e, v7) the programs run in grid order,
  // and each starts the copies of the next one's first block (docs/decode.md); with megacore
  // (v4, v5p) the grid is split across two cores and each program copies its own.
  bool cross_program = false;
};

// For a decode spec whose tiling passed the tpu target's check_tiling, at `splits`.
TpuDecodeShape tpu_decode_shape(const Spec& spec, int64_t splits);

// The kernels' operands, in argument order (docs/decode.md "The tpu kernel"): kv_lens and the
// page table (scalar prefetch), q as [batch, kv heads, rows, d], k and v whole (memory space
// any: the kernel copies their blocks or pages itself), sinks row-replicated [kv heads, rows,
// 128] when unsplit, then out and lse, or the partials out_s and lse_s when split; scratch: two
// k and two v block buffers with their DMA semaphores, m, l and acc. The combine: the partials
// in, out and lse out.
std::vector<TpuOperand> tpu_decode_operands(const Spec& spec, const TpuDecodeShape& shape);
std::vector<TpuOperand> tpu_combine_operands(const Spec& spec, const TpuDecodeShape& shape);

// The split kernel, <name>.tpu.mlir, and (with more than one split) the combine,
// <name>.tpu.combine.mlir.
KernelPlan plan_tpu_decode_kernel(const Spec& spec, int64_t splits);
KernelPlan plan_tpu_decode_combine(const Spec& spec, int64_t splits);

}  // namespace kgen
