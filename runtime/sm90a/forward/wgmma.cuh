// The two wgmma products of the forward kernel, S = Q K^T and O += P V with P in registers,
// their fragments held to the accumulator view every sm90a kernel indexes (sm90a/wgmma.cuh).
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

#include "sm90a/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct ForwardMma {
  using QK = decltype(cute::make_tiled_mma(typename Config::MmaQK{}));
  using PV = decltype(cute::make_tiled_mma(typename Config::MmaPV{}));
  static_assert(accumulator_matches_view<QK>(), "S fragment layout");
  static_assert(accumulator_matches_view<PV>(), "O fragment layout");
  static_assert(register_a_operand_matches_view<PV>(), "P operand layout");

  // S as a thread's rows and columns of its consumer's tile.
  using SView = AccumulatorView<Config::kBlockKv>;
  // P: the S fragment converted to 16 bits, as the A operand of O += P V.
  using LayoutP = RegisterOperandLayout<Config::kBlockKv>;
};

}  // namespace sm90a
}  // namespace kgen
