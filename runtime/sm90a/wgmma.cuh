// What every sm90a kernel (forward, backward) knows of wgmma's register fragments: the
// accumulator as a thread's rows and columns (the view masks and softmax read,
// cuda/score_tile.cuh), held to CuTe's own layouts at compile time; a 16-bit accumulator
// reused as the register A operand of the next product; one tile product over every k
// block; and an accumulator stored to shared memory with stmatrix.
#pragma once

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>

namespace kgen {
namespace sm90a {

// The accumulator of a 64 x kTileColumns wgmma as one thread of the warpgroup holds it:
// thread t has rows 16 (t / 32) + (t % 32) / 4 + 8 r for r in {0, 1} and columns 2 (t % 4) +
// c % 2 + 8 (c / 2) for c in [0, kTileColumns / 4), at fragment index c % 2 + 2 r + 4 (c / 2).
// Rows and columns are the tile's: the warpgroup's row 0 sits at `first_row` of it.
template <int kTileColumns>
struct AccumulatorView {
  static_assert(kTileColumns % 8 == 0, "wgmma N is a multiple of 8");
  static constexpr int kRows = 2;
  static constexpr int kColumns = kTileColumns / 4;
  static constexpr int kMaxColumnBase = 6;  // column_base = 2 (t % 4)

  int row_base;     // the thread's first row; the second is 8 below
  int column_base;  // the thread's first column

  // `thread`: the thread's index in its warpgroup.
  CUTE_DEVICE AccumulatorView(int thread, int first_row)
      : row_base(first_row + row_of_thread(thread)), column_base(column_of_thread(thread)) {}

  CUTE_HOST_DEVICE static constexpr int row_of_thread(int t) {
    return 16 * (t / 32) + (t % 32) / 4;
  }
  CUTE_HOST_DEVICE static constexpr int column_of_thread(int t) { return 2 * (t % 4); }
  CUTE_HOST_DEVICE static constexpr int index(int r, int c) { return c % 2 + 2 * r + 4 * (c / 2); }
  CUTE_HOST_DEVICE static constexpr int row_offset(int r) { return 8 * r; }
  CUTE_HOST_DEVICE static constexpr int column_offset(int c) { return c % 2 + 8 * (c / 2); }
  CUTE_DEVICE int row(int r) const { return row_base + row_offset(r); }
  CUTE_DEVICE int column(int c) const { return column_base + column_offset(c); }
};

// CuTe's (thread, value) -> m + 64 n layout `Layout` of a 64-row fragment against the view:
// CuTe layouts are affine in (thread, value), so the thread part is checked on the thread
// bits and the value part on every one of the first `values` values.
template <class Layout>
constexpr bool matches_accumulator_view(int values) {
  using View = AccumulatorView<8>;
  for (int t : {1, 2, 4, 8, 16, 32, 64}) {
    if (int(Layout{}(t, 0)) != View::row_of_thread(t) + 64 * View::column_of_thread(t))
      return false;
  }
  for (int e = 0; e < values; ++e) {
    const int r = (e / 2) % 2;
    const int c = e % 2 + 2 * (e / 4);
    if (View::index(r, c) != e) return false;
    if (int(Layout{}(0, e)) != View::row_offset(r) + 64 * View::column_offset(c)) return false;
  }
  return true;
}

// The accumulator of a tiled wgmma is the view above.
template <class Mma>
constexpr bool accumulator_matches_view() {
  using LayoutC = typename Mma::Atom::Traits::CLayout;
  return matches_accumulator_view<LayoutC>(int(cute::size<1>(LayoutC{})));
}

// Its register A operand per 16-column k block is the view's too, 8 values: an accumulator
// converted to 16 bits is the A operand of the next product, register for register.
template <class Mma>
constexpr bool register_a_operand_matches_view() {
  using LayoutA = typename Mma::Atom::Traits::ALayout;
  return int(cute::size<1>(LayoutA{})) == 8 && matches_accumulator_view<LayoutA>(8);
}

// A 16-bit accumulator of kTileColumns columns as the register A operand: per 16-column k
// block, ((column pair, row half, 8-column half), 1, k block). Same element order.
template <int kTileColumns>
using RegisterOperandLayout = cute::Layout<
    cute::Shape<cute::Shape<cute::_2, cute::_2, cute::_2>, cute::_1, cute::Int<kTileColumns / 16>>,
    cute::Stride<cute::Stride<cute::_1, cute::_2, cute::_4>, cute::_0, cute::_8>>;

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

// A 16-bit accumulator fragment of `mma` to a (64, N) K-major shared-memory tile with
// stmatrix; the caller fences and synchronizes before the tile is read.
template <class Element, class TiledMma, class Fragment, class SmemTensor>
CUTE_DEVICE void store_fragment(TiledMma const& mma, Fragment const& fragment, SmemTensor&& tile,
                                int thread) {
  using namespace cute;
  TiledCopy store = make_tiled_copy_C(Copy_Atom<SM90_U32x4_STSM_N, Element>{}, mma);
  ThrCopy thr_store = store.get_thread_slice(thread);
  copy(store, thr_store.retile_S(fragment), thr_store.partition_D(tile));
}

}  // namespace sm90a
}  // namespace kgen
