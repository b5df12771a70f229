// Runs a MosaicKernel over its whole grid the way Mosaic's pipeline does on a TPU core:
// steps in lexicographic order (last grid dim fastest); before a step, every window whose
// block index changed gets its new block (inputs copied in, outputs started fresh); an
// output block stays resident while consecutive steps revisit it and is written back
// when its index is about to change and at the end of the grid; scratch buffers persist
// across all steps. An input in memory space `any` has no window: the kernel sees the whole
// array and copies from it itself (its DMAs run as dma_runtime.h says; DMA semaphores start
// at 0, and a copy still in flight when the grid ends is an error).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "buffer_view.h"
#include "mosaic_kernel.h"

namespace kgen::mosaic {

enum class ArrayRole {
  kInput,        // copied into the block buffer when its block index changes
  kOutput,       // block starts poisoned (see GridOptions::fresh_blocks), written back
  kInputOutput,  // copied in, and written back (an aliased input/output)
};

// One full array per windowed operand, in the kernel's operand order.
struct WindowArray {
  BufferView full;  // the whole array, row-major; outputs are written in place
  ArrayRole role = ArrayRole::kInput;
};

enum class FreshContents {
  kPoison,  // NaN / 0xA5: a kernel that reads before writing produces visible garbage
  kZero,
};

struct GridOptions {
  // Contents of output blocks when they become resident, and of scratch before step 0.
  FreshContents fresh_blocks = FreshContents::kPoison;
  // The grid SAMPLE: when set, only steps for which it returns true run. Block residency
  // is then tracked across the steps that run, as if the others did not exist, so a
  // sample must keep every step that contributes to the outputs it checks: e.g. all
  // q blocks and kv steps of a few (batch, head) pairs, never a subset of one output
  // block's reduction steps. Outputs of steps that never run are left untouched.
  std::function<bool(const std::vector<int64_t>& grid_index)> sample;
};

struct GridStats {
  int64_t steps_run = 0;
  int64_t steps_skipped = 0;
  int64_t blocks_copied_in = 0;
  // Blocks copied in per window, in the kernel's window order: what a kernel that skips
  // blocks by repeating an index is checked by.
  std::vector<int64_t> window_copies;
  // The kernel's own DMAs (tpu.enqueue_dma, dma_runtime.h) per window they read from, in the
  // kernel's window order: what a kernel that copies pages by hand read.
  std::vector<int64_t> window_dmas;
  std::vector<int64_t> window_dma_bytes;
  // DMAs each step that ran started, in the order the steps ran: a kernel's copy schedule.
  std::vector<int64_t> step_dma_starts;
  int64_t blocks_written_back = 0;
  double seconds = 0;  // wall time of the whole walk, copies included
};

// `prefetch` holds each scalar-prefetch operand's full contents as int32 (converted to
// the operand's dtype). Throws MosaicError on arrays that do not fit the kernel.
GridStats run_grid(const MosaicKernel& kernel, const std::vector<std::vector<int32_t>>& prefetch,
                   const std::vector<WindowArray>& windows, const GridOptions& options = {});

}  // namespace kgen::mosaic
