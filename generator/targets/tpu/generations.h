// The per-generation facts of TPUs that decide what a Mosaic kernel may do: one table,
// read by validation, the VMEM budget and the emitter alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kgen {

struct TpuGeneration {
  const char* name;
  int64_t vmem_bytes;  // per TensorCore
  int64_t smem_bytes;  // scalar memory, where the block plan is prefetched
  int64_t mxu_width;   // 128x128 systolic arrays up to v5, 256x256 from v6e
  // TensorCores one kernel's "parallel" grid dimensions are split across: 2 where two cores
  // act as one device (megacore: v4, v5p), else 1 (v7's two cores are two devices).
  int64_t kernel_cores;
};

inline const std::vector<TpuGeneration>& tpu_generations() {
  constexpr int64_t kMiB = int64_t{1} << 20;
  static const std::vector<TpuGeneration> table = {
      {"v4", 16 * kMiB, 1 * kMiB, 128, 2},   {"v5e", 128 * kMiB, 1 * kMiB, 128, 1},
      {"v5p", 64 * kMiB, 1 * kMiB, 128, 2},  {"v6e", 128 * kMiB, 1 * kMiB, 256, 1},
      {"v7", 64 * kMiB, 1 * kMiB, 256, 1},
  };
  return table;
}

inline const TpuGeneration* find_tpu_generation(const std::string& name) {
  for (const TpuGeneration& generation : tpu_generations())
    if (name == generation.name) return &generation;
  return nullptr;
}

// A vector register is 8 sublanes x 128 lanes of 32 bits; 16-bit types pack two rows
// per sublane, so their second-minor block dimension wants multiples of 16.
constexpr int64_t kTpuLanes = 128;
inline int64_t tpu_sublane_rows(int dtype_bytes) { return 8 * (4 / dtype_bytes); }

}  // namespace kgen
