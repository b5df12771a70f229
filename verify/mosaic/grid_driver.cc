#include "grid_driver.h"

#include <chrono>
#include <optional>
#include <string>

#include "block_copy.h"
#include "dma_runtime.h"
#include "mosaic_error.h"

namespace kgen::mosaic {
namespace {

// Where a window stands between steps: its buffer and which block, if any, it holds.
struct Resident {
  HostArray buffer;
  std::optional<std::vector<int64_t>> index;
};

void check_windows(const KernelSignature& sig, const std::vector<WindowArray>& windows) {
  if (windows.size() != sig.num_windows()) {
    throw MosaicError("the kernel has " + std::to_string(sig.num_windows()) +
                      " windowed operands, got " + std::to_string(windows.size()) + " arrays");
  }
  for (size_t k = 0; k < windows.size(); ++k) {
    const BufferView& full = windows[k].full;
    std::string what = "window " + std::to_string(k);
    if (full.dtype != sig.window_operand(k).dtype) {
      throw MosaicError(what + ": array is " + dtype_name(full.dtype) + ", the kernel wants " +
                        dtype_name(sig.window_operand(k).dtype));
    }
    if (full.shape.size() != sig.window_params[k].window_bounds.size()) {
      throw MosaicError(what + ": array rank differs from the rank of window_bounds");
    }
    if (!full.data && full.num_elements() > 0) throw MosaicError(what + ": null data");
  }
}

void fresh(const BufferView& buffer, FreshContents contents) {
  if (contents == FreshContents::kZero)
    fill_zero(buffer);
  else
    fill_poison(buffer);
}

bool writes_back(ArrayRole role) { return role != ArrayRole::kInput; }

// An input the kernel copies from by hand: no window, the whole array in memory space any.
bool unwindowed(const KernelSignature& sig, size_t k) {
  return sig.window_params[k].transform.empty() && sig.window_operand(k).memory_space == "any";
}

DmaRegion region(const BufferView& view) {
  return DmaRegion{static_cast<const std::byte*>(view.data), view.num_bytes()};
}
bool reads_in(ArrayRole role) { return role != ArrayRole::kOutput; }

}  // namespace

GridStats run_grid(const MosaicKernel& kernel, const std::vector<std::vector<int32_t>>& prefetch,
                   const std::vector<WindowArray>& windows, const GridOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const KernelSignature& sig = kernel.signature();
  check_windows(sig, windows);
  if (prefetch.size() != static_cast<size_t>(sig.scalar_prefetch)) {
    throw MosaicError("the kernel has " + std::to_string(sig.scalar_prefetch) +
                      " scalar prefetch operands, got " + std::to_string(prefetch.size()));
  }
  std::vector<HostArray> prefetch_arrays;
  std::vector<BufferView> prefetch_views;
  for (size_t i = 0; i < prefetch.size(); ++i) {
    prefetch_arrays.push_back(kernel.make_prefetch(i, prefetch[i]));
  }
  for (HostArray& array : prefetch_arrays) prefetch_views.push_back(array.view());

  std::vector<Resident> resident;
  for (size_t k = 0; k < windows.size(); ++k) {
    const OperandInfo& operand = sig.window_operand(k);
    // An unwindowed input is used in place: it needs no buffer of its own.
    const std::vector<int64_t> shape = unwindowed(sig, k) ? std::vector<int64_t>{0} : operand.shape;
    resident.push_back(Resident{HostArray(shape, operand.dtype), std::nullopt});
  }
  std::vector<HostArray> scratch;
  for (int64_t i = 0; i < sig.scratch_operands; ++i) {
    const OperandInfo& operand = sig.scratch_operand(i);
    scratch.emplace_back(operand.shape, operand.dtype);
    if (operand.memory_space == "semaphore_mem")
      fill_zero(scratch.back().view());  // semaphores count from 0
    else
      fresh(scratch.back().view(), options.fresh_blocks);
  }
  std::vector<BufferView> blocks;
  for (size_t k = 0; k < windows.size(); ++k)
    blocks.push_back(unwindowed(sig, k) ? windows[k].full : resident[k].buffer.view());
  for (HostArray& s : scratch) blocks.push_back(s.view());
  // What a DMA may touch: every full array (its count is that window's), every block and
  // scratch buffer.
  std::vector<DmaRegion> regions;
  for (const WindowArray& w : windows) regions.push_back(region(w.full));
  for (Resident& r : resident) regions.push_back(region(r.buffer.view()));
  for (HostArray& s : scratch) regions.push_back(region(s.view()));
  dma_trace().reset(std::move(regions));

  GridStats stats;
  stats.window_copies.assign(windows.size(), 0);
  auto write_back = [&](size_t k) {
    Resident& r = resident[k];
    if (r.index && writes_back(windows[k].role)) {
      copy_block_out(r.buffer.view(), sig.window_params[k].window_bounds, *r.index,
                     windows[k].full);
      ++stats.blocks_written_back;
    }
  };

  const std::vector<int64_t>& bounds = sig.iteration_bounds;
  for (int64_t b : bounds) {
    if (b <= 0) return stats;  // an empty grid runs nothing
  }
  std::vector<int64_t> step(bounds.size(), 0);
  while (true) {
    if (!options.sample || options.sample(step)) {
      for (size_t k = 0; k < windows.size(); ++k) {
        if (unwindowed(sig, k)) continue;
        std::vector<int64_t> index = kernel.block_indices(k, step, prefetch_views);
        Resident& r = resident[k];
        if (r.index == index) continue;
        write_back(k);
        r.index = index;
        if (reads_in(windows[k].role)) {
          copy_block_in(windows[k].full, sig.window_params[k].window_bounds, index,
                        r.buffer.view());
          ++stats.blocks_copied_in;
          ++stats.window_copies[k];
        } else {
          fresh(r.buffer.view(), options.fresh_blocks);
        }
      }
      const int64_t started_before = dma_trace().started();
      kernel.run_step(step, prefetch_views, blocks);
      stats.step_dma_starts.push_back(dma_trace().started() - started_before);
      ++stats.steps_run;
    } else {
      ++stats.steps_skipped;
    }
    // Odometer, last dim fastest.
    size_t d = bounds.size();
    while (d > 0 && ++step[d - 1] == bounds[d - 1]) step[--d] = 0;
    if (d == 0) break;
  }
  for (size_t k = 0; k < windows.size(); ++k) write_back(k);
  const DmaTrace& trace = dma_trace();
  if (trace.in_flight() > 0)
    throw MosaicError(std::to_string(trace.in_flight()) +
                      " DMA(s) started and never waited for when the grid ended: the kernel leaves copies in flight");
  for (size_t k = 0; k < windows.size(); ++k) {
    stats.window_dmas.push_back(trace.counts()[k].copies);
    stats.window_dma_bytes.push_back(trace.counts()[k].bytes);
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace kgen::mosaic
