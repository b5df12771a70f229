// CuTe's ground truth (written by cute_truth.cu at build time) and the comparisons of the
// emulator's layout functions against it. Each comparison takes the function under test as a
// parameter and returns how many elements disagree, so a test can also hand it a deliberately
// wrong function and see the comparison catch it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tensor/gmma.h"
#include "tensor/ldmatrix.h"
#include "tensor/swizzle.h"
#include "tensor/tma.h"
#include "tensor/umma.h"

namespace kgen::emu::test {

struct SwizzleTruth {
  Swizzle swizzle;
  std::vector<uint32_t> image;  // image[i] = swizzle(4 i)
};

// One wgmma operand tile sliced into instruction-sized blocks.
struct GmmaBlock {
  int mn_block = 0, k_block = 0;
  uint64_t descriptor = 0;          // CuTe's make_gmma_desc
  std::vector<uint32_t> addresses;  // [mn * k_extent + k]: CuTe's address of element (mn, k)
};
struct GmmaTruth {
  int element_bytes = 0;
  Major major = Major::kK;
  int layout = 0;  // the descriptor's layout type
  int mn_tile = 0, k_tile = 0, mn_extent = 0, k_extent = 0;
  std::vector<GmmaBlock> blocks;
  std::string name() const;
};

// CuTe's (thread, value) -> column-major index of a 64 x N (accumulator) or 64 x K (A) tile.
struct FragmentTruth {
  int parameter = 0;  // N for accumulators, element bytes for A
  int values = 0;
  std::vector<int> index;  // [thread * values + value]
};

struct MatrixCopyTruth {
  bool store = false, trans = false;
  int matrices = 0;
  std::vector<int> row_of_lane;    // [lane]: element index of the row its address gives (row * 8)
  std::vector<int> element;        // [(lane * matrices + reg) * 2 + part]: 16-bit element index
};

struct TmaTruth {
  std::string name;
  int element_bytes = 0;
  bool mn_major = false;
  int rows = 0, cols = 0, mn_tile = 0, k_tile = 0;
  uint32_t base = 0;
  TensorMap map;                    // as CuTe encoded it, global_address relative to the tensor
  std::vector<uint32_t> addresses;  // [mn * k_tile + k]: CuTe's smem address of tile element (mn, k)
};

// A TMEM load atom: the tensor-memory lane and column of each register of each thread.
struct TmemCopyTruth {
  std::string shape;  // the PTX shape: 32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2
  int num = 0, split = 0, registers = 0;
  std::vector<TmemCell> cells;  // [thread * registers + register], relative to lane 0, column 0
};

// UMMA::make_instr_desc for one set of parameters.
struct InstrDescriptorTruth {
  std::string a, b, c;  // f16, bf16, tf32, e4m3, e5m2; f16, f32
  int m = 0, n = 0;
  bool a_mn_major = false, b_mn_major = false, a_negate = false;
  uint32_t value = 0;
};

struct CuteTruth {
  std::vector<SwizzleTruth> swizzles;
  std::vector<GmmaTruth> gmma;
  std::vector<GmmaTruth> umma;  // the same records for tcgen05 (layout: the tcgen05 encoding)
  std::vector<InstrDescriptorTruth> instr_descriptors;
  std::map<int, FragmentTruth> accumulators;  // by N
  std::map<int, FragmentTruth> a_registers;   // by element bytes
  std::vector<MatrixCopyTruth> matrix_copies;
  std::vector<TmaTruth> tma;
  std::vector<TmemCopyTruth> tmem;
};

// The truth file of this build, parsed once; nullptr (and `why` set) when it is missing.
const CuteTruth* cute_truth(std::string* why);

using SwizzleFn = std::function<uint32_t(Swizzle, uint32_t)>;
int count_swizzle_mismatches(const SwizzleTruth& truth, const SwizzleFn& fn);

using OperandAddressFn = std::function<uint32_t(uint64_t descriptor, Major, int mn, int k, int element_bytes)>;
int count_gmma_mismatches(const GmmaTruth& truth, const OperandAddressFn& fn);

using FragmentFn = std::function<FragmentCoord(int thread, int value)>;
int count_fragment_mismatches(const FragmentTruth& truth, const FragmentFn& fn);

using AddressLaneFn = std::function<int(int matrix, int row)>;
using MatrixElementFn = std::function<LdmatrixElement(int lane, int reg, int part, bool trans)>;
int count_matrix_copy_mismatches(const MatrixCopyTruth& truth, const AddressLaneFn& lane_of, const MatrixElementFn& element);

// Loads CuTe's tile through `load` as the boxes CuTe's tile holds (tile_to_shape stacks them MN
// first), with every TMA coordinate moved by `shift` (dimension 0, 1) so that parts of the box
// fall outside the tensor, and counts the elements of the tile whose bytes at CuTe's address are
// not the global element they should be (or the fill, for an out-of-bound one). A global element's
// bytes are its linear index + 1, so no element looks like the zero fill. A refused load (an
// error string) counts every element of the tile and prints the error.
using TmaLoadFn = std::function<std::string(const TensorMap&, std::span<const int32_t>, std::span<uint8_t>, uint32_t,
                                            const GlobalRead&)>;
int count_tma_load_mismatches(const TmaTruth& truth, int32_t shift0, int32_t shift1, bool nan_fill, const TmaLoadFn& load);

// tcgen05_ld_st_cell-like `fn` (address 0) for every register of every thread of the atom.
using TmemCellFn = std::function<TmemCell(const std::string& shape, int lane, int reg, uint32_t split)>;
int count_tmem_copy_mismatches(const TmemCopyTruth& truth, const TmemCellFn& fn);

// tma_box_element_address for every element of CuTe's tile, against CuTe's address.
int count_tma_address_mismatches(const TmaTruth& truth);

// The inverse: writes each tile element's value at CuTe's address, stores through `store`, and
// counts global elements that differ from what the store should leave (the tile's value in bounds
// of the box, the untouched sentinel elsewhere).
using TmaStoreFn = std::function<std::string(const TensorMap&, std::span<const int32_t>, std::span<const uint8_t>,
                                             uint32_t, const GlobalWrite&)>;
int count_tma_store_mismatches(const TmaTruth& truth, int32_t shift0, int32_t shift1, const TmaStoreFn& store);

}  // namespace kgen::emu::test
