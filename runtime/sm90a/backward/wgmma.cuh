// The five wgmma products of the backward kernel (docs/sm90a-backward.md, "One step"), as
// four tiled MMAs whose register layouts are held to the accumulator view every sm90a kernel
// indexes (sm90a/wgmma.cuh):
//   S^T = K Q^T and dP^T = V dO^T        64 kv x 64 q, both operands in shared memory
//   dV += P^T dO and dK += dS^T Q        64 kv x a part's columns, P^T and dS^T from registers
//   dQ = dS K, per 64 columns            64 q x 64, dS and K in shared memory (MN-major)
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct BackwardMma {
  using SdP = decltype(cute::make_tiled_mma(typename Config::MmaSdP{}));
  using Dk = decltype(cute::make_tiled_mma(typename Config::MmaDk{}));
  using Dv = decltype(cute::make_tiled_mma(typename Config::MmaDv{}));
  using Dq = decltype(cute::make_tiled_mma(typename Config::MmaDq{}));
  static_assert(accumulator_matches_view<SdP>(), "S^T and dP^T fragment layout");
  static_assert(accumulator_matches_view<Dk>(), "dK fragment layout");
  static_assert(accumulator_matches_view<Dv>(), "dV fragment layout");
  static_assert(accumulator_matches_view<Dq>(), "dQ fragment layout");
  static_assert(register_a_operand_matches_view<Dk>() && register_a_operand_matches_view<Dv>(),
                "P^T and dS^T operand layout");

  // S^T (kv rows, q columns) as a thread's rows and columns of its kv slot's tile.
  using SView = AccumulatorView<Config::kBlockQ>;
  // P^T and dS^T: S^T and dP^T converted to 16 bits, as register A operands.
  using LayoutP = RegisterOperandLayout<Config::kBlockQ>;
};

}  // namespace sm90a
}  // namespace kgen
