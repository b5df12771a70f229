// The sm90a target's decode kernel (docs/decode.md, "The sm90a kernel"): split-KV attention of
// a spec's new tokens over its contiguous or paged cache, and the combine that merges the
// splits, both in one generated file. Every number of the kernel is decided here, once: the
// template (templates/cuda/decode/) substitutes them, the launcher header exports them, and
// the emulated harness (verify/cuda/decode_harness.cc) reads them from that header.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kernel_plans.h"
#include "spec.h"

namespace kgen {

struct Sm90aDecodeShape {
  int64_t rows = 0;        // the q tile of one (batch, kv head): group x q_len, q head-major
  int64_t q_tiles = 0;     // wgmma tiles of 64 rows it takes (rows padded to 64 each)
  int64_t block_kv = 0;
  int64_t splits = 1;      // the target's decode_split: as written, or kgen's choice
  int64_t kv_blocks = 0;   // the most blocks one sequence reads (decode_kv_blocks)
  int64_t page_size = 0;   // 0: a contiguous cache
  int64_t pages = 0;       // paged: the pool's pages per kv head
  int64_t blocks_per_page = 0;  // paged, block_kv <= page_size: one TMA box per block
  int64_t pages_per_block = 0;  // paged, block_kv > page_size: TMA boxes per page
  int64_t window_left = -1;     // a local window's left reach; -1 when causal
  int64_t stages = 0;           // the K/V ring
  int64_t threads = 0;          // a producer warpgroup and one consumer warpgroup
  int64_t batch = 0;
  int64_t kv_heads = 0;

  // CTAs: (split x q tile, kv head, batch); split s, q tile t is x = s * q_tiles + t.
  std::vector<int64_t> grid() const { return {splits * q_tiles, kv_heads, batch}; }
  bool split() const { return splits > 1; }
};

// For a decode spec whose sm90a tiling passed check_tiling.
Sm90aDecodeShape sm90a_decode_shape(const Spec& spec);

// Why kgen writes no sm90a decode kernel for this spec, or nothing: pages of other than a
// multiple of 8 positions in a block of several (a page's boxes must start on whole 128-byte
// swizzle periods; their gather is not written), or fragments past a consumer's registers.
std::optional<std::string> sm90a_decode_unsupported(const Spec& spec);

// <name>.sm90a.cu: the split kernel and the combine; <name>.sm90a.h: the launcher.
KernelPlan plan_sm90a_decode_kernel(const Spec& spec);

// `kgen explain`'s lines for the kernel beyond the shared decode lines.
void explain_sm90a_decode(std::ostream& out, const Spec& spec);

}  // namespace kgen
