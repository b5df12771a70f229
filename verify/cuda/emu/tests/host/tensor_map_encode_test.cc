// cuTensorMapEncodeTiled: a legal map encodes as kgen's TensorMap, and each documented
// requirement, broken alone, gives CUDA_ERROR_INVALID_VALUE and leaves the map alone.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "../../tensor/tensor_map.h"

namespace {

struct TiledArguments {
  alignas(64) CUtensorMap map;
  alignas(256) unsigned char memory[256];
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  cuuint32_t rank = 3;
  void* address = nullptr;
  cuuint64_t dims[5] = {64, 128, 4, 1, 1};
  cuuint64_t strides[4] = {128, 128 * 128, 0, 0};
  cuuint32_t box[5] = {64, 64, 1, 1, 1};
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  CUtensorMap* target = &map;

  TiledArguments() {
    address = memory;
    std::memset(&map, 0xAB, sizeof map);
  }
  CUresult encode() {
    return cuTensorMapEncodeTiled(target, type, rank, address, dims, strides, box, element_strides, interleave, swizzle,
                                  l2, oob);
  }
  bool untouched() const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&map);
    for (size_t i = 0; i < sizeof map; ++i)
      if (bytes[i] != 0xAB) return false;
    return true;
  }
};

// A legal interleaved map: NC/8HWC8 of 16-bit values (16-byte channel groups).
void make_interleaved(TiledArguments& a) {
  a.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
  a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  a.rank = 4;
  a.dims[0] = 8;   // 8 channels x 2 bytes
  a.dims[1] = 16;  // W
  a.dims[2] = 16;  // H
  a.dims[3] = 2;   // C / 8
  a.strides[0] = 16;
  a.strides[1] = 16 * 16;
  a.strides[2] = 16 * 16 * 16;
  a.box[0] = 8;
  a.box[1] = 8;
  a.box[2] = 8;
  a.box[3] = 1;
}

TEST(TensorMapEncode, LegalMapIsEncoded) {
  TiledArguments a;
  ASSERT_EQ(a.encode(), CUDA_SUCCESS);
  kgen::emu::TensorMap map;
  std::memcpy(static_cast<void*>(&map), &a.map, sizeof map);
  EXPECT_EQ(map.magic, kgen::emu::TensorMap::kMagic);
  EXPECT_EQ(map.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(map.rank, 3);
  EXPECT_EQ(map.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(map.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(map.element_bytes, 2);
  EXPECT_EQ(map.global_address, reinterpret_cast<uint64_t>(a.memory));
  EXPECT_EQ(map.global_dim[0], 64u);
  EXPECT_EQ(map.global_dim[2], 4u);
  EXPECT_EQ(map.global_stride[0], 2u);
  EXPECT_EQ(map.global_stride[1], 128u);
  EXPECT_EQ(map.global_stride[2], 128u * 128u);
  EXPECT_EQ(map.box_dim[0], 64u);
  EXPECT_EQ(map.element_strides[1], 1);
  EXPECT_EQ(map.global_dim[3], 0u);  // beyond the rank: zero
  const auto* bytes = reinterpret_cast<const unsigned char*>(&a.map);
  for (size_t i = sizeof map; i < sizeof a.map; ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i;
}

TEST(TensorMapEncode, LegalInterleavedMapIsEncoded) {
  TiledArguments a;
  make_interleaved(a);
  EXPECT_EQ(a.encode(), CUDA_SUCCESS);
}

TEST(TensorMapEncode, NanFillOnFloatIsLegal) {
  TiledArguments a;
  a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  EXPECT_EQ(a.encode(), CUDA_SUCCESS);
}

TEST(TensorMapEncode, ReplaceAddress) {
  TiledArguments a;
  ASSERT_EQ(a.encode(), CUDA_SUCCESS);
  EXPECT_EQ(cuTensorMapReplaceAddress(&a.map, a.memory + 32), CUDA_SUCCESS);
  kgen::emu::TensorMap map;
  std::memcpy(static_cast<void*>(&map), &a.map, sizeof map);
  EXPECT_EQ(map.global_address, reinterpret_cast<uint64_t>(a.memory + 32));
  EXPECT_EQ(cuTensorMapReplaceAddress(&a.map, a.memory + 8), CUDA_ERROR_INVALID_VALUE);
}

struct Violation {
  const char* name;
  std::function<void(TiledArguments&)> apply;
  CUresult expected = CUDA_ERROR_INVALID_VALUE;
};

class TensorMapViolation : public ::testing::TestWithParam<Violation> {};

TEST_P(TensorMapViolation, IsRefused) {
  TiledArguments a;
  GetParam().apply(a);
  EXPECT_EQ(a.encode(), GetParam().expected);
  if (a.target == &a.map) {
    EXPECT_TRUE(a.untouched());
  }
}

// Each requirement of cuTensorMapEncodeTiled's documentation, broken alone.
const Violation kViolations[] = {
    {"NullMap", [](TiledArguments& a) { a.target = nullptr; }},
    {"MapNot64Aligned",
     [](TiledArguments& a) { a.target = reinterpret_cast<CUtensorMap*>(reinterpret_cast<char*>(&a.map) + 32); }},
    {"UnknownDataType", [](TiledArguments& a) { a.type = static_cast<CUtensorMapDataType>(16); }},
    {"RankZero", [](TiledArguments& a) { a.rank = 0; }},
    {"RankSix", [](TiledArguments& a) { a.rank = 6; }},
    {"InterleaveNeedsRank3",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.rank = 2;
     }},
    {"AddressNot16Aligned", [](TiledArguments& a) { a.address = a.memory + 8; }},
    {"Interleave32NeedsAddress32",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
       a.dims[0] = 16;
       a.strides[0] = 32;
       a.strides[1] = 32 * 16;
       a.strides[2] = 32 * 16 * 16;
       a.address = a.memory + 16;
     }},
    {"Packed16BNeedsAddress32",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 128;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
       a.address = a.memory + 16;
     }},
    {"GlobalDimZero", [](TiledArguments& a) { a.dims[1] = 0; }},
    {"GlobalDimAbove2To32", [](TiledArguments& a) { a.dims[2] = (cuuint64_t{1} << 32) + 1; }},
    {"Packed16BDimNotMultipleOf128",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
       a.dims[0] = 64;
       a.box[0] = 128;
       a.strides[0] = 128;
     }},
    {"Packed8BDimOdd",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
       a.dims[0] = 63;
       a.box[0] = 64;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
     }},
    {"StrideNotMultipleOf16", [](TiledArguments& a) { a.strides[0] = 136; }},
    {"StrideAtLeast2To40", [](TiledArguments& a) { a.strides[1] = cuuint64_t{1} << 40; }},
    {"Interleave32StrideNotMultipleOf32",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
       a.dims[0] = 16;
       a.strides[0] = 48;
       a.strides[1] = 48 * 16;
       a.strides[2] = 48 * 16 * 16;
     }},
    {"Packed16BStrideNotMultipleOf32",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 144;
     }},
    {"InterleavedStrideDoesNotCoverDimension",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.strides[1] = 16 * 8;  // W has 16 entries of 16 bytes
     }},
    {"BoxDimZero", [](TiledArguments& a) { a.box[1] = 0; }},
    {"BoxDimAbove256", [](TiledArguments& a) { a.box[1] = 257; }},
    {"InnerBoxNotMultipleOf16Bytes",
     [](TiledArguments& a) {
       a.box[0] = 36;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
     }},
    {"Packed16BBoxNot128",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 64;
       a.strides[0] = 128;
     }},
    {"ElementStrideZero", [](TiledArguments& a) { a.element_strides[0] = 0; }},
    {"ElementStrideAbove8", [](TiledArguments& a) { a.element_strides[2] = 9; }},
    {"UnknownInterleave", [](TiledArguments& a) { a.interleave = static_cast<CUtensorMapInterleave>(3); }},
    {"UnknownSwizzle", [](TiledArguments& a) { a.swizzle = static_cast<CUtensorMapSwizzle>(7); }},
    {"UnknownL2Promotion", [](TiledArguments& a) { a.l2 = static_cast<CUtensorMapL2promotion>(4); }},
    {"UnknownOobFill", [](TiledArguments& a) { a.oob = static_cast<CUtensorMapFloatOOBfill>(2); }},
    {"InnerBoxExceedsSwizzle32", [](TiledArguments& a) { a.swizzle = CU_TENSOR_MAP_SWIZZLE_32B; }},
    {"InnerBoxExceedsSwizzle64", [](TiledArguments& a) { a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; }},
    {"InnerBoxExceedsSwizzle128", [](TiledArguments& a) { a.box[0] = 128; }},
    {"Interleave32NeedsSwizzle32",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
       a.dims[0] = 16;
       a.strides[0] = 32;
       a.strides[1] = 32 * 16;
       a.strides[2] = 32 * 16 * 16;
     }},
    {"Packed6NeedsNoInterleave",
     [](TiledArguments& a) {
       make_interleaved(a);
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 128;
       a.strides[1] = 128 * 16;
       a.strides[2] = 128 * 16 * 16;
     }},
    {"Packed6Swizzle64Refused",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 128;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
     }},
    {"Packed4Swizzle128Atom64Refused",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 128;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
     }},
    {"NanFillOnIntegers",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_UINT16;
       a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
     }},
    {"NanFillOnPacked",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
       a.dims[0] = 64;
       a.box[0] = 64;
       a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
       a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
     }},
    // A legal packed map is refused as not emulated, not as invalid.
    {"LegalPackedIsNotSupported",
     [](TiledArguments& a) {
       a.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
       a.dims[0] = 128;
       a.box[0] = 128;
       a.strides[0] = 128;
     },
     CUDA_ERROR_NOT_SUPPORTED},
};

INSTANTIATE_TEST_SUITE_P(Requirements, TensorMapViolation, ::testing::ValuesIn(kViolations),
                         [](const ::testing::TestParamInfo<Violation>& info) { return std::string(info.param.name); });

}  // namespace
