// How a decode kernel splits the KV sequence (docs/decode.md, "Splits"): each (batch, kv head)
// group's kv blocks are divided into `splits` parts that run in parallel and each write a
// partial out and lse, which a combine merges. One rule for every target, fed with the
// target's parallel units (TensorCores, SMs).
#pragma once

#include <cstdint>
#include <optional>

namespace kgen {

struct DecodeSplits {
  int64_t splits = 1;
  bool chosen = false;  // by the rule (the spec left "splits" out)
};

// The work one kernel launch offers: `work_units` independent units without splitting (batch x
// kv heads x q row tiles per group), each reading up to `kv_blocks` kv blocks, on a chip with
// `parallel_units` units that run them side by side.
struct DecodeWork {
  int64_t work_units = 1;
  int64_t kv_blocks = 1;
  int64_t parallel_units = 1;
};

// The critical path of `splits`, in kv-block reads: waves of split units, each reading
// ceil(kv_blocks / splits) blocks plus one block's worth of fixed cost (its q tile in, its
// partial out and lse back).
int64_t decode_split_cost(const DecodeWork& work, int64_t splits);

// `written` when the spec sets it. Else 1 when the units alone fill the chip (splitting would
// only trade the last wave's tail for a combine), and otherwise the fewest splits of least
// cost among 1 to min(kv_blocks, kMaxDecodeSplits): enough parallel work at small batch.
constexpr int64_t kMaxDecodeSplits = 128;
DecodeSplits decode_splits(const DecodeWork& work, std::optional<int64_t> written);

// The kv blocks [begin, end) of split `split` when a sequence's live range has `blocks` of them:
// balanced (sizes differ by at most one) and never empty while splits <= blocks.
struct BlockRange {
  int64_t begin = 0;
  int64_t end = 0;
};
BlockRange split_blocks(int64_t blocks, int64_t splits, int64_t split);

}  // namespace kgen
