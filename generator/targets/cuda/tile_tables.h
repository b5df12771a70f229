// The block plan's tile lists as the tables a CUDA kernel reads (the forward's kv blocks per
// q block, the sm90a backward's q blocks per kv block), and the order CTAs are launched in.
#pragma once

#include <cstdint>
#include <vector>

namespace kgen {

// Per list its partial blocks, then its full ones, one after the other.
struct FlatTileLists {
  std::vector<int64_t> begin;          // per list its first entry, then the end: lists + 1
  std::vector<int64_t> partial_count;  // per list: its first partial_count entries are partial
  std::vector<int64_t> entries;
  int64_t size(std::size_t list) const { return begin[list + 1] - begin[list]; }
};
FlatTileLists flatten_tile_lists(const std::vector<std::vector<int32_t>>& partial,
                                 const std::vector<std::vector<int32_t>>& full);

// 0 .. weights.size() - 1, heaviest first, ties in index order: the launch order that starts
// the longest CTAs early.
std::vector<int64_t> heaviest_first(const std::vector<int64_t>& weights);

}  // namespace kgen
