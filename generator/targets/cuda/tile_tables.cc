#include "targets/cuda/tile_tables.h"

#include <algorithm>
#include <numeric>

namespace kgen {

FlatTileLists flatten_tile_lists(const std::vector<std::vector<int32_t>>& partial,
                                 const std::vector<std::vector<int32_t>>& full) {
  FlatTileLists flat;
  flat.begin.push_back(0);
  for (std::size_t list = 0; list < partial.size(); ++list) {
    flat.entries.insert(flat.entries.end(), partial[list].begin(), partial[list].end());
    flat.entries.insert(flat.entries.end(), full[list].begin(), full[list].end());
    flat.begin.push_back(static_cast<int64_t>(flat.entries.size()));
    flat.partial_count.push_back(static_cast<int64_t>(partial[list].size()));
  }
  return flat;
}

std::vector<int64_t> heaviest_first(const std::vector<int64_t>& weights) {
  std::vector<int64_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return weights[static_cast<std::size_t>(a)] > weights[static_cast<std::size_t>(b)];
  });
  return order;
}

}  // namespace kgen
