// TMA tile mode. Box placement (swizzle, box order) against the smem layouts CuTe's make_tma_copy
// pairs with the tensor maps it encodes; out-of-bound fill, traversal strides, box bytes and the
// refusals against the ISA and cuTensorMapEncodeTiled's documentation.
#include "tensor/tma.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "truth_fixture.h"

namespace kgen::emu::test {
namespace {

const TmaLoadFn kLoad = tma_load_tile;
const TmaStoreFn kStore = tma_store_tile;

// Box shifts that put parts of CuTe's tile before the tensor and past its end.
struct Shift {
  int32_t d0, d1;
};
std::vector<Shift> oob_shifts(const TmaTruth& t) {
  const int32_t dim0 = int32_t(t.map.global_dim[0]), dim1 = int32_t(t.map.global_dim[1]);
  const int32_t extent0 = t.mn_major ? t.mn_tile : t.k_tile, extent1 = t.mn_major ? t.k_tile : t.mn_tile;
  return {{-3, -5}, {dim0 - extent0 / 2, dim1 - extent1 / 3}, {-extent0 + 1, 2}, {1, dim1 - 1}, {dim0 + 4, 0}};
}

TEST(TmaLoad, CuteConfigurationsAreWhatThisTestExpects) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  ASSERT_EQ(truth->tma.size(), 10u);
  for (const TmaTruth& t : truth->tma) {
    EXPECT_EQ(t.map.rank, 2) << t.name;
    EXPECT_EQ(t.map.global_address, 0u) << t.name;  // the tile at the tensor's origin
    EXPECT_EQ(t.map.global_dim[0], uint64_t(t.mn_major ? t.rows : t.cols)) << t.name;
    EXPECT_EQ(check_tma_tile(t.map, 2, t.base, 1 << 16), "") << t.name;
  }
}

TEST(TmaLoad, PlacesTheBoxWhereCutesSmemLayoutExpectsIt) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma) EXPECT_EQ(count_tma_load_mismatches(t, 0, 0, false, kLoad), 0) << t.name;
}

TEST(TmaLoad, BoxElementAddressesAreCutes) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma) EXPECT_EQ(count_tma_address_mismatches(t), 0) << t.name;
}

TEST(TmaLoad, FillsOutOfBoundElementsWithZero) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma)
    for (const Shift s : oob_shifts(t))
      EXPECT_EQ(count_tma_load_mismatches(t, s.d0, s.d1, false, kLoad), 0) << t.name << " shifted " << s.d0 << "," << s.d1;
}

TEST(TmaLoad, FillsOutOfBoundElementsWithCanonicalNanWhenAsked) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma)
    for (const Shift s : oob_shifts(t))
      EXPECT_EQ(count_tma_load_mismatches(t, s.d0, s.d1, true, kLoad), 0) << t.name << " shifted " << s.d0 << "," << s.d1;
}

TEST(TmaStore, WritesTheInBoundPartOfCutesTile) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma) {
    EXPECT_EQ(count_tma_store_mismatches(t, 0, 0, kStore), 0) << t.name;
    for (const Shift s : oob_shifts(t))
      EXPECT_EQ(count_tma_store_mismatches(t, s.d0, s.d1, kStore), 0) << t.name << " shifted " << s.d0 << "," << s.d1;
  }
}

// Planted bugs.
TEST(TmaLoad, ComparisonCatchesAMissingSwizzle) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma) {
    if (t.map.swizzle == 0) continue;
    EXPECT_GT(count_tma_load_mismatches(t, 0, 0, false,
                                        [](const TensorMap& map, auto c, auto s, uint32_t a, const GlobalRead& r) {
                                          TensorMap plain = map;
                                          plain.swizzle = 0;
                                          return tma_load_tile(plain, c, s, a, r);
                                        }),
              0)
        << t.name;
  }
}

TEST(TmaLoad, ComparisonCatchesTheWrongSwizzleWidth) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma) {
    if (t.map.swizzle != 1 && t.map.swizzle != 2) continue;  // 32B and 64B read as 128B
    EXPECT_GT(count_tma_load_mismatches(t, 0, 0, false,
                                        [](const TensorMap& map, auto c, auto s, uint32_t a, const GlobalRead& r) {
                                          TensorMap wide = map;
                                          wide.swizzle = 3;
                                          return tma_load_tile(wide, c, s, a, r);
                                        }),
              0)
        << t.name;
  }
}

TEST(TmaLoad, ComparisonCatchesClampedNegativeCoordinates) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma)
    EXPECT_GT(count_tma_load_mismatches(t, -3, -5, false,
                                        [](const TensorMap& map, std::span<const int32_t> c, auto s, uint32_t a,
                                           const GlobalRead& r) {
                                          std::vector<int32_t> clamped(c.begin(), c.end());
                                          for (int32_t& x : clamped) x = std::max(x, 0);
                                          return tma_load_tile(map, clamped, s, a, r);
                                        }),
              0)
        << t.name;
}

TEST(TmaLoad, ComparisonCatchesAMissingNanFill) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  for (const TmaTruth& t : truth->tma)
    EXPECT_GT(count_tma_load_mismatches(t, -3, -5, true,
                                        [](const TensorMap& map, auto c, auto s, uint32_t a, const GlobalRead& r) {
                                          TensorMap zero = map;
                                          zero.oob_fill = 0;
                                          return tma_load_tile(zero, c, s, a, r);
                                        }),
              0)
        << t.name;
}

TEST(TmaStore, ComparisonCatchesWritingOutOfBoundElements) {
  KGEN_REQUIRE_CUTE_TRUTH(truth);
  const TmaTruth& t = truth->tma.front();
  // A store that also writes the out-of-bound part of the box (where it falls inside the buffer).
  EXPECT_GT(count_tma_store_mismatches(t, int32_t(t.map.global_dim[0]) - 32, 0,
                                       [](const TensorMap& map, std::span<const int32_t> c, auto s, uint32_t a,
                                          const GlobalWrite& w) {
                                         TensorMap wide = map;
                                         wide.global_dim[0] += 8;  // the row pitch leaves room: 8 more elements per row
                                         return tma_store_tile(wide, c, s, a, w);
                                       }),
            0);
}

// ---------------------------------------------------------------- hand-built maps

TensorMap plain_map(uint8_t data_type, uint8_t element_bytes, std::vector<uint64_t> dims, std::vector<uint32_t> box,
                    uint64_t address) {
  TensorMap map;
  map.magic = TensorMap::kMagic;
  map.data_type = data_type;
  map.element_bytes = element_bytes;
  map.rank = uint8_t(dims.size());
  map.global_address = address;
  uint64_t stride = element_bytes;
  for (size_t d = 0; d < dims.size(); ++d) {
    map.global_dim[d] = dims[d];
    map.global_stride[d] = stride;
    stride *= dims[d];
    map.box_dim[d] = box[d];
    map.element_strides[d] = 1;
  }
  return map;
}

// A global tensor of 32-bit elements holding their linear index + 1, and a reader over it.
struct Global32 {
  std::vector<uint32_t> data;
  explicit Global32(size_t n) : data(n) {
    for (size_t i = 0; i < n; ++i) data[i] = uint32_t(i + 1);
  }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data.data()); }
  GlobalRead reader() const {
    return [this](uint64_t a, std::span<uint8_t> out) {
      if (a < address() || a + out.size() > address() + data.size() * 4) throw std::out_of_range("unallocated");
      std::memcpy(out.data(), reinterpret_cast<const uint8_t*>(data.data()) + (a - address()), out.size());
    };
  }
};

uint32_t word_at(const std::vector<uint8_t>& shared, uint32_t address) {
  uint32_t v = 0;
  std::memcpy(&v, shared.data() + address, 4);
  return v;
}

TEST(TmaBox, BytesCountTheWholeBoxDividedByTraversalStrides) {
  TensorMap map = plain_map(6, 2, {100, 100, 7}, {32, 10, 2}, 0);
  EXPECT_EQ(box_bytes(map), 32u * 2 * 10 * 2);
  map.element_strides[1] = 3;  // ceil(10 / 3) = 4 rows
  map.element_strides[0] = 4;  // ignored: no traversal stride along dimension 0
  EXPECT_EQ(box_extent(map, 0), 32u);
  EXPECT_EQ(box_extent(map, 1), 4u);
  EXPECT_EQ(box_bytes(map), 32u * 2 * 4 * 2);
}

TEST(TmaLoad, TraversalStrideSkipsRows) {
  Global32 global(8 * 20);
  TensorMap map = plain_map(7, 4, {8, 20}, {8, 10}, global.address());
  map.element_strides[1] = 3;
  std::vector<uint8_t> shared(4096, 0xab);
  const int32_t coordinates[2] = {0, 9};
  ASSERT_EQ(tma_load_tile(map, coordinates, shared, 256, global.reader()), "");
  for (uint32_t row = 0; row < 4; ++row) {  // global rows 9, 12, 15, 18
    for (uint32_t col = 0; col < 8; ++col)
      EXPECT_EQ(word_at(shared, 256 + (row * 8 + col) * 4), (9 + 3 * row) * 8 + col + 1) << row << "," << col;
  }
  EXPECT_EQ(word_at(shared, 256 + 4 * 8 * 4), 0xababababu);  // nothing past the 4 rows
}

TEST(TmaLoad, RankThreeBoxIsDimensionZeroInnermost) {
  Global32 global(4 * 3 * 5);
  const TensorMap map = plain_map(7, 4, {4, 3, 5}, {4, 2, 3}, global.address());
  std::vector<uint8_t> shared(1024, 0xab);
  const int32_t coordinates[3] = {0, 1, 3};  // dimension 2 runs past its end at 5
  ASSERT_EQ(tma_load_tile(map, coordinates, shared, 128, global.reader()), "");
  for (uint32_t i2 = 0; i2 < 3; ++i2)
    for (uint32_t i1 = 0; i1 < 2; ++i1)
      for (uint32_t i0 = 0; i0 < 4; ++i0) {
        const uint32_t g2 = 3 + i2, g1 = 1 + i1;
        const uint32_t want = g2 < 5 ? (g2 * 3 + g1) * 4 + i0 + 1 : 0;
        EXPECT_EQ(word_at(shared, 128 + ((i2 * 2 + i1) * 4 + i0) * 4), want) << i0 << i1 << i2;
      }
}

TEST(TmaLoad, Swizzle128BAtom32BMovesThirtyTwoByteChunks) {
  Global32 global(32 * 8);
  const TensorMap base = plain_map(7, 4, {32, 8}, {32, 8}, global.address());
  TensorMap map = base;
  map.swizzle = 4;  // CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B
  std::vector<uint8_t> shared(4096, 0);
  const int32_t coordinates[2] = {0, 0};
  ASSERT_EQ(tma_load_tile(map, coordinates, shared, 1024, global.reader()), "");
  // Row 3, element 0 (32-byte chunk 0) lands in chunk 0 ^ 3 = 3 of its 128-byte row.
  EXPECT_EQ(word_at(shared, 1024 + 3 * 128 + 3 * 32), 3u * 32 + 1);
  // Row 5 (pattern row 1) element 9 (chunk 1, word 1) lands in chunk 0.
  EXPECT_EQ(word_at(shared, 1024 + 5 * 128 + 0 * 32 + 4), 5u * 32 + 9 + 1);
}

TEST(TmaLoad, ReadErrorsPassThrough) {
  Global32 global(16);
  TensorMap map = plain_map(7, 4, {16, 16}, {16, 2}, global.address());  // claims 16 rows, 1 allocated
  std::vector<uint8_t> shared(1024);
  const int32_t coordinates[2] = {0, 0};
  EXPECT_THROW(tma_load_tile(map, coordinates, shared, 0, global.reader()), std::out_of_range);
}

TEST(TmaCheck, RefusesWhatTheIsaOrTheEmulatorDoesNot) {
  const TensorMap good = plain_map(6, 2, {64, 64}, {64, 8}, 0x1000);
  const auto check = [](const TensorMap& map, uint32_t address = 1024, size_t coordinates = 2, size_t shared = 1 << 16) {
    return check_tma_tile(map, coordinates, address, shared);
  };
  EXPECT_EQ(check(good), "");
  EXPECT_NE(check(good, 1024 + 64), "");           // shared address not 128-byte aligned
  EXPECT_NE(check(good, 0, 3), "");                // coordinates for another rank
  EXPECT_NE(check(good, 1024, 2, 1024 + 512), "");  // the box runs past shared memory
  TensorMap m = good;
  m.magic = 0;
  EXPECT_NE(check(m), "");
  m = good;
  m.interleave = 1;
  EXPECT_NE(check(m), "");
  m = good;
  m.swizzle = 3;
  EXPECT_EQ(check(m, 2048), "");
  // A buffer off the swizzle pattern's 1024-byte repeat is legal: the pattern then follows the
  // absolute address (CUDA Programming Guide, TMA swizzle; CUTLASS's sm90 storage is 128-aligned).
  EXPECT_EQ(check(m, 1024 + 128), "");
  m.swizzle = 1;
  EXPECT_NE(check(m), "");  // 128-byte rows are wider than the 32B swizzle span
  m.box_dim[0] = 16;
  EXPECT_EQ(check(m, 256), "");
  EXPECT_EQ(check(m, 1024 + 128), "");  // 32B swizzle repeats every 256 bytes: an offset pattern, legal
  m = good;
  for (uint8_t unsupported : {5, 6, 7}) {
    m.swizzle = unsupported;
    EXPECT_NE(check(m), "") << int(unsupported);
  }
  m = good;
  m.data_type = 1;  // UINT16
  m.oob_fill = 1;   // NaN fill needs a float type
  EXPECT_NE(check(m), "");
  m = good;
  m.data_type = 13;  // packed 4-bit
  EXPECT_NE(check(m), "");
  m = good;
  m.element_bytes = 4;  // not a FLOAT16's size
  EXPECT_NE(check(m), "");
  m = good;
  m.box_dim[0] = 4;  // 8 bytes: not a multiple of 16
  EXPECT_NE(check(m), "");
}

TEST(TmaLoad, NothingIsWrittenWhenRefused) {
  Global32 global(64);
  TensorMap map = plain_map(7, 4, {8, 8}, {8, 8}, global.address());
  std::vector<uint8_t> shared(1024, 0xab);
  const int32_t coordinates[2] = {0, 0};
  EXPECT_NE(tma_load_tile(map, coordinates, shared, 64, global.reader()), "");
  EXPECT_TRUE(std::all_of(shared.begin(), shared.end(), [](uint8_t b) { return b == 0xab; }));
}

}  // namespace
}  // namespace kgen::emu::test
