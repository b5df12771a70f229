// The two wgmma products of the forward kernel and the register fragments they share: the
// accumulator layout the softmax indexes, P as the register A operand of O += P V, and one
// tile product over every k block.
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

namespace kgen {
namespace sm90a {

// The accumulator fragment of a 64 x N wgmma, as this kernel indexes it: thread t of the
// warpgroup holds rows 16 * (t / 32) + (t % 32) / 4 + 8 * r for r in {0, 1} and columns
// 2 * (t % 4) + c + 8 * n for c in {0, 1}, n in [0, N / 8), at fragment index c + 2 r + 4 n.
// The check holds CuTe's own accumulator layout to that description.
template <class Mma>
constexpr bool fragment_matches_rows_and_columns() {
  using LayoutC = typename Mma::Atom::Traits::CLayout;  // (thread, value) -> m + 64 n
  // CuTe layouts are affine in (thread, value): check the thread part on the thread bits
  // and the value part on every value.
  for (int t : {1, 2, 4, 8, 16, 32, 64}) {
    if (int(LayoutC{}(t, 0)) != 16 * (t / 32) + (t % 32) / 4 + 64 * (2 * (t % 4))) return false;
  }
  for (int e = 0; e < int(cute::size<1>(LayoutC{})); ++e) {
    if (int(LayoutC{}(0, e)) != 8 * ((e / 2) % 2) + 64 * (e % 2 + 8 * (e / 4))) return false;
  }
  return true;
}

// The register A operand of O += P V per 16-column k block: thread t holds rows as above and
// columns 2 * (t % 4) + a0 + 8 * a2 at value index a0 + 2 a1 + 4 a2 (a1: the row half).
template <class Mma>
constexpr bool p_operand_matches() {
  using LayoutA = typename Mma::Atom::Traits::ALayout;  // (thread, value) -> m + 64 k
  for (int t : {1, 2, 4, 8, 16, 32, 64}) {
    if (int(LayoutA{}(t, 0)) != 16 * (t / 32) + (t % 32) / 4 + 64 * (2 * (t % 4))) return false;
  }
  for (int e = 0; e < 8; ++e) {
    if (int(LayoutA{}(0, e)) != 8 * ((e / 2) % 2) + 64 * (e % 2 + 8 * (e / 4))) return false;
  }
  return int(cute::size<1>(LayoutA{})) == 8;
}

// The tiled wgmma of both products, their layouts checked against the indexing above.
template <class Config>
struct ForwardMma {
  using QK = decltype(cute::make_tiled_mma(typename Config::MmaQK{}));
  using PV = decltype(cute::make_tiled_mma(typename Config::MmaPV{}));
  static_assert(fragment_matches_rows_and_columns<QK>(), "S fragment layout");
  static_assert(fragment_matches_rows_and_columns<PV>(), "O fragment layout");
  static_assert(p_operand_matches<PV>(), "P operand layout");

  // P as the register A operand of O += P V: the S fragment reinterpreted per 16-column k
  // block, ((column pair, row half, 8-column half), 1, k block). Same element order as S.
  using LayoutP =
      cute::Layout<cute::Shape<cute::Shape<cute::_2, cute::_2, cute::_2>, cute::_1,
                               cute::Int<Config::kBlockKv / 16>>,
                   cute::Stride<cute::Stride<cute::_1, cute::_2, cute::_4>, cute::_0, cute::_8>>;
};

// One wgmma tile product: all k blocks of a and b into c, c zeroed first when asked.
template <class Mma, class A, class B, class C>
CUTE_DEVICE void wgmma_tile(Mma& mma, A const& a, B const& b, C& c, bool zero_first) {
  mma.accumulate_ = zero_first ? cute::GMMA::ScaleOut::Zero : cute::GMMA::ScaleOut::One;
  CUTE_UNROLL
  for (int kb = 0; kb < cute::size<2>(a); ++kb) {
    cute::gemm(mma, a(cute::_, cute::_, kb), b(cute::_, cute::_, kb), c);
    mma.accumulate_ = cute::GMMA::ScaleOut::One;
  }
}

}  // namespace sm90a
}  // namespace kgen
