// The five wgmma products of the backward kernel (docs/sm90a-backward.md, "One step"), as
// four tiled MMAs whose register layouts are held to the forward's indexing (forward/wgmma.cuh):
//   S^T = K Q^T and dP^T = V dO^T        64 kv x 64 q, both operands in shared memory
//   dV += P^T dO and dK += dS^T Q        64 kv x a part's columns, P^T and dS^T from registers
//   dQ = dS K, per 64 columns            64 q x 64, dS and K in shared memory (MN-major)
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

#include "sm90a/forward/wgmma.cuh"

namespace kgen {
namespace sm90a {

template <class Config>
struct BackwardMma {
  using SdP = decltype(cute::make_tiled_mma(typename Config::MmaSdP{}));
  using Dk = decltype(cute::make_tiled_mma(typename Config::MmaDk{}));
  using Dv = decltype(cute::make_tiled_mma(typename Config::MmaDv{}));
  using Dq = decltype(cute::make_tiled_mma(typename Config::MmaDq{}));
  static_assert(fragment_matches_rows_and_columns<SdP>(), "S^T and dP^T fragment layout");
  static_assert(fragment_matches_rows_and_columns<Dk>(), "dK fragment layout");
  static_assert(fragment_matches_rows_and_columns<Dv>(), "dV fragment layout");
  static_assert(fragment_matches_rows_and_columns<Dq>(), "dQ fragment layout");
  static_assert(p_operand_matches<Dk>() && p_operand_matches<Dv>(), "P^T and dS^T operand layout");

  // P^T and dS^T as register A operands: the S^T fragment reinterpreted per 16-column (q)
  // k block, ((column pair, row half, 8-column half), 1, k block), as the forward's P.
  using LayoutP =
      cute::Layout<cute::Shape<cute::Shape<cute::_2, cute::_2, cute::_2>, cute::_1,
                               cute::Int<Config::kBlockQ / 16>>,
                   cute::Stride<cute::Stride<cute::_1, cute::_2, cute::_4>, cute::_0, cute::_8>>;
};

}  // namespace sm90a
}  // namespace kgen
