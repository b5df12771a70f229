// ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.shared.b16 and stmatrix (sm_90) of the same
// shapes: a warp moves one, two or four 8 x 8 matrices of 16-bit elements between shared memory
// and registers. PTX ISA "Warp-level matrix load/store instructions" (ldmatrix, stmatrix); checked
// against CuTe's SM75_*_LDSM_* and SM90_*_STSM_* copy traits by tests/tensor.
//
// Addresses: each matrix is 8 rows of 16 contiguous bytes, each row anywhere (16-byte aligned);
// lane 8 i + r supplies the address of row r of matrix i. With .x1 only lanes 0-7 supply one,
// with .x2 lanes 0-15; the other lanes' addresses are ignored.
//
// Registers: each lane has one .b32 register per matrix (register i for matrix i); its low 16 bits
// are part 0, its high 16 bits part 1. stmatrix reads the same registers to write the same places.
#pragma once

namespace kgen::emu {

// The lane whose address operand gives row `row` of matrix `matrix`.
constexpr int ldmatrix_address_lane(int matrix, int row) { return 8 * matrix + row; }

// An element of the matrices in memory terms: matrix `matrix`, row `row` (the row whose address
// lane 8 * matrix + row supplied), 16-bit element `col` (0..7) of that row.
struct LdmatrixElement {
  int matrix = 0;
  int row = 0;
  int col = 0;
  constexpr bool operator==(const LdmatrixElement&) const = default;
};

// Which element part `part` (0 low, 1 high) of register `reg` of lane `lane` holds. Without
// .trans lane l holds row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 (the mma fragment layout);
// with .trans it holds the same positions of the transposed matrix: column l / 4 of memory rows
// 2 (l % 4) and 2 (l % 4) + 1.
constexpr LdmatrixElement ldmatrix_element(int lane, int reg, int part, bool trans) {
  if (trans) return {reg, 2 * (lane % 4) + part, lane / 4};
  return {reg, lane / 4, 2 * (lane % 4) + part};
}

}  // namespace kgen::emu
