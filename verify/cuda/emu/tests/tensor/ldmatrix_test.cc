// ldmatrix / stmatrix .m8n8 .b16 against CuTe's SM75_*_LDSM_* and SM90_*_STSM_* copy traits.
#include "tensor/ldmatrix.h"

#include <gtest/gtest.h>

#include "truth_fixture.h"

namespace kgen::emu::test {
namespace {

TEST(Ldmatrix, EveryShapeMatchesCute) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->matrix_copies.size(), 12u);  // ld and st, x1 x2 x4, with and without .trans
  for (const MatrixCopyTruth& m : truth->matrix_copies)
    EXPECT_EQ(count_matrix_copy_mismatches(m, ldmatrix_address_lane, ldmatrix_element), 0)
        << (m.store ? "stmatrix" : "ldmatrix") << " x" << m.matrices << (m.trans ? " .trans" : "");
}

TEST(Ldmatrix, ComparisonCatchesIgnoringTrans) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const MatrixCopyTruth& m : truth->matrix_copies) {
    if (!m.trans) continue;
    EXPECT_GT(count_matrix_copy_mismatches(m, ldmatrix_address_lane,
                                           [](int lane, int reg, int part, bool) { return ldmatrix_element(lane, reg, part, false); }),
              0);
  }
}

TEST(Ldmatrix, ComparisonCatchesRowMajorAddressLanes) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const MatrixCopyTruth& m : truth->matrix_copies) {
    if (m.matrices == 1) continue;  // one matrix: both orders agree
    EXPECT_GT(count_matrix_copy_mismatches(m, [&](int matrix, int row) { return row * m.matrices + matrix; }, ldmatrix_element), 0);
  }
}

TEST(Ldmatrix, ComparisonCatchesRegistersPickingRows) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const MatrixCopyTruth& m : truth->matrix_copies) {
    EXPECT_GT(count_matrix_copy_mismatches(m, ldmatrix_address_lane,
                                           [](int lane, int reg, int part, bool trans) {
                                             LdmatrixElement e = ldmatrix_element(lane, reg, part, trans);
                                             std::swap(e.row, e.col);
                                             return e;
                                           }),
              0);
  }
}

TEST(Ldmatrix, HandChecks) {
  EXPECT_EQ(ldmatrix_address_lane(2, 5), 21);
  EXPECT_EQ(ldmatrix_element(13, 1, 1, false), (LdmatrixElement{1, 3, 3}));
  EXPECT_EQ(ldmatrix_element(13, 1, 1, true), (LdmatrixElement{1, 3, 3}));
  EXPECT_EQ(ldmatrix_element(6, 0, 0, false), (LdmatrixElement{0, 1, 4}));
  EXPECT_EQ(ldmatrix_element(6, 0, 0, true), (LdmatrixElement{0, 4, 1}));
}

}  // namespace
}  // namespace kgen::emu::test
