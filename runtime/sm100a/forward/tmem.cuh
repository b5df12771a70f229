// The tcgen05 products of the forward kernel and the tensor-memory views its warps read and
// write. One q row per tensor-memory lane: with the 32dp32b copy atoms, thread t of a
// softmax or correction warpgroup holds row t, and register j of an N-column view holds its
// column j (the atoms repeat 32 consecutive columns, .x32).
#pragma once

#include <cstdint>

#include <cute/atom/copy_traits_sm100.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/tensor.hpp>

#include "sm100a/forward/kernel_traits.cuh"

namespace kgen {
namespace sm100a {

// A thread's row of a (128, kTileColumns) tensor-memory view loaded by load_row: one row
// (its lane) and every column, column c in register c. The view masks read
// (cuda/score_tile.cuh).
template <int kTileColumns>
struct TmemRowView {
  static constexpr int kRows = 1;
  static constexpr int kColumns = kTileColumns;
  static constexpr int kMaxColumnBase = 0;
  static constexpr int column_base = 0;

  int lane;  // the thread's row: its tensor-memory lane

  CUTE_HOST_DEVICE static constexpr int index(int /*r*/, int c) { return c; }
  CUTE_HOST_DEVICE static constexpr int column_offset(int c) { return c; }
  CUTE_DEVICE int row(int /*r*/) const { return lane; }
  CUTE_DEVICE int column(int c) const { return c; }
};

template <class Config>
struct ForwardMma {
  using QK = decltype(cute::make_tiled_mma(typename Config::MmaQK{}));
  using PV = decltype(cute::make_tiled_mma(typename Config::MmaPV{}));
};

// S of one tile as f32, 128 rows by block_kv columns, at tensor-memory address `address`.
template <class Config>
CUTE_DEVICE auto tmem_s(uint32_t address) {
  auto s = cute::partition_fragment_C(typename ForwardMma<Config>::QK{},
                                      cute::Shape<cute::_128, cute::Int<Config::kBlockKv>>{});
  s.data() = address;
  return s;
}

// O, 128 rows by head_dim_v f32 columns.
template <class Config>
CUTE_DEVICE auto tmem_o(uint32_t address) {
  auto o = cute::partition_fragment_C(typename ForwardMma<Config>::PV{},
                                      cute::Shape<cute::_128, cute::Int<Config::kHeadDimV>>{});
  o.data() = address;
  return o;
}

// Columns [column, column + N) of a (128, *) tensor-memory view, as a (128, N) view.
template <int N, class Tensor>
CUTE_DEVICE auto tmem_columns(Tensor const& view, uint32_t column) {
  auto part = view.compose(cute::make_layout(cute::make_shape(cute::_128{}, cute::Int<N>{})));
  part.data() = view.data().get() + column;
  return part;
}

// The thread's row of a (128, N) view as registers: load, or store from `registers`.
template <int N, class View>
CUTE_DEVICE void load_row(View const& view, cute::array<float, N>& registers) {
  using namespace cute;
  auto copy_op = make_tmem_copy(SM100_TMEM_LOAD_32dp32b32x{}, view);
  ThrCopy thr = copy_op.get_slice(threadIdx.x % 128);
  Tensor source = thr.partition_S(view);
  Tensor destination =
      make_tensor(make_rmem_ptr(registers.data()), make_layout(shape(thr.partition_D(view))));
  copy(copy_op, source, destination);
}

template <int N, class View, class Register>
CUTE_DEVICE void store_row(View const& view, cute::array<Register, N> const& registers) {
  using namespace cute;
  auto copy_op = make_tmem_copy(SM100_TMEM_STORE_32dp32b32x{}, view);
  ThrCopy thr = copy_op.get_slice(threadIdx.x % 128);
  Tensor destination = thr.partition_D(view);
  Tensor source = make_tensor(make_rmem_ptr(reinterpret_cast<float const*>(registers.data())),
                              make_layout(shape(thr.partition_S(view))));
  copy(copy_op, source, destination);
}

}  // namespace sm100a
}  // namespace kgen
