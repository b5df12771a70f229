// The sm90a backward's column windows (runtime/sm90a/backward/kernel_traits.cuh,
// column_window): with two consumer warpgroups per kv slot, each reads and writes a window of
// dK's and dV's columns, of the K-major swizzled K and V tiles and of the Q and dO rings
// read as their transposes. Every element of every window must be the element of the full
// tile it stands for; a window that does not start on a 64-column group must not be (the
// check can fail). Host code only: no GPU needed.
#include <cstdio>

#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>

#include "sm90a/backward/kernel_traits.cuh"

namespace {

using namespace cute;
using Element = cutlass::bfloat16_t;
constexpr int kStages = 2;
constexpr int kWidth = 128;

// Elements of windows of kWidth columns starting at `first`, `step` apart, that differ from
// the full tile's, for a tile of kFeatures columns.
template <int kFeatures>
int misplaced(int step) {
  using Atom = GMMA::Layout_K_SW128_Atom<Element>;
  using Tile = decltype(tile_to_shape(Atom{}, Shape<_64, Int<kFeatures>>{}));
  using Ring = decltype(tile_to_shape(Atom{}, Shape<_64, Int<kFeatures>, Int<kStages>>{}));
  using RingT = kgen::sm90a::TransposedStack<Ring, 64, kFeatures, kStages>;
  alignas(1024) static Element storage[64 * kFeatures * kStages];
  Tensor tile = make_tensor(make_smem_ptr(storage), Tile{});
  Tensor ring_t = make_tensor(make_smem_ptr(storage), RingT{});
  int wrong = 0;
  for (int first = 0; first + kWidth <= kFeatures; first += step) {
    Tensor window =
        kgen::sm90a::column_window(tile, Shape<_64, Int<kWidth>>{}, make_coord(0, first));
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < kWidth; ++c)
        wrong += raw_pointer_cast(&window(r, c)) != raw_pointer_cast(&tile(r, first + c));
    Tensor window_t = kgen::sm90a::column_window(ring_t, Shape<Int<kWidth>, _64, Int<kStages>>{},
                                                 make_coord(first, 0, 0));
    for (int c = 0; c < kWidth; ++c)
      for (int q = 0; q < 64; ++q)
        for (int s = 0; s < kStages; ++s)
          wrong +=
              raw_pointer_cast(&window_t(c, q, s)) != raw_pointer_cast(&ring_t(first + c, q, s));
  }
  return wrong;
}

int expect(const char* what, bool ok) {
  std::printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  int failures = 0;
  failures += expect("192 columns, windows at 0 and 64", misplaced<192>(64) == 0);
  failures += expect("256 columns, windows at 0, 64 and 128", misplaced<256>(64) == 0);
  failures += expect("a window at column 32 of 192 is caught", misplaced<192>(32) > 0);
  return failures;
}
