#include "tensor_map_encode.h"

#include <cstdio>
#include <cstring>

#include "../tensor/tensor_map.h"

namespace kgen::emu {
namespace {

constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;
constexpr uint32_t kMaxBoxDim = 256;
constexpr uint32_t kMaxElementStride = 8;

struct DataTypeFacts {
  int bits;      // per element as the box and stride rules count it; 0: not a data type
  bool is_float; // may use CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
  bool packed;   // the sub-byte 16U4/16U6 types
};

DataTypeFacts facts_of(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return {8, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: return {16, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: return {32, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_INT32: return {32, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_UINT64: return {64, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_INT64: return {64, false, false};
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: return {16, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: return {32, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return {64, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return {16, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: return {32, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: return {32, true, false};
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return {32, true, false};
    // 16 four-bit values in 8 bytes: half a byte each.
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: return {4, false, true};
    // 16 four- or six-bit values in a 16-byte slot: a byte each as far as sizes go.
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: return {8, false, true};
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: return {8, false, true};
    default: return {0, false, false};
  }
}

bool aligned16_packed(CUtensorMapDataType type) {
  return type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

uint32_t swizzle_span_bytes(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    default: return 128;  // 128B and the 128B atom variants
  }
}

std::string u64(uint64_t value) { return std::to_string(value); }

CUresult invalid(std::string& why, std::string rule) {
  why = std::move(rule);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult check(const TiledTensorMapRequest& r, std::string& why) {
  if (r.tensor_map == nullptr) return invalid(why, "tensorMap is null");
  if (reinterpret_cast<uintptr_t>(r.tensor_map) % 64 != 0) return invalid(why, "tensorMap is not 64-byte aligned");
  const DataTypeFacts type = facts_of(r.data_type);
  if (type.bits == 0) return invalid(why, "tensorDataType " + u64(r.data_type) + " is not a CUtensorMapDataType");
  if (r.interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || r.interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
    return invalid(why, "interleave " + u64(r.interleave) + " is not a CUtensorMapInterleave");
  if (r.swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || r.swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    return invalid(why, "swizzle " + u64(r.swizzle) + " is not a CUtensorMapSwizzle");
  if (r.l2_promotion < CU_TENSOR_MAP_L2_PROMOTION_NONE || r.l2_promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
    return invalid(why, "l2Promotion " + u64(r.l2_promotion) + " is not a CUtensorMapL2promotion");
  if (r.oob_fill < CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE || r.oob_fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return invalid(why, "oobFill " + u64(r.oob_fill) + " is not a CUtensorMapFloatOOBfill");

  const bool interleaved = r.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE;
  if (r.rank < 1 || r.rank > uint32_t(TensorMap::kMaxRank)) return invalid(why, "tensorRank " + u64(r.rank) + " is not 1..5");
  if (interleaved && r.rank < 3) return invalid(why, "tensorRank must be >= 3 when interleave is not NONE");

  const uintptr_t address = reinterpret_cast<uintptr_t>(r.global_address);
  if (address % 16 != 0) return invalid(why, "globalAddress is not 16-byte aligned");
  if (r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && address % 32 != 0)
    return invalid(why, "globalAddress must be 32-byte aligned with CU_TENSOR_MAP_INTERLEAVE_32B");
  if (aligned16_packed(r.data_type) && address % 32 != 0)
    return invalid(why, "globalAddress must be 32-byte aligned for the 16U4_ALIGN16B and 16U6_ALIGN16B types");

  if (r.global_dim == nullptr || r.box_dim == nullptr || r.element_strides == nullptr ||
      (r.rank > 1 && r.global_strides == nullptr))
    return invalid(why, "globalDim, globalStrides, boxDim or elementStrides is null");
  for (uint32_t i = 0; i < r.rank; ++i)
    if (r.global_dim[i] == 0 || r.global_dim[i] > kMaxGlobalDim)
      return invalid(why, "globalDim[" + u64(i) + "] = " + u64(r.global_dim[i]) + " is not in 1..2^32");
  if (aligned16_packed(r.data_type) && r.global_dim[0] % 128 != 0)
    return invalid(why, "globalDim[0] must be a multiple of 128 for the 16U4_ALIGN16B and 16U6_ALIGN16B types");
  if (r.data_type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && r.global_dim[0] % 2 != 0)
    return invalid(why, "globalDim[0] must be a multiple of 2 for the 16U4_ALIGN8B type");

  const uint32_t stride_multiple =
      (r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || aligned16_packed(r.data_type)) ? 32 : 16;
  for (uint32_t i = 0; i + 1 < r.rank; ++i) {
    const uint64_t stride = r.global_strides[i];
    if (stride % stride_multiple != 0)
      return invalid(why, "globalStrides[" + u64(i) + "] = " + u64(stride) + " is not a multiple of " +
                              u64(stride_multiple));
    if (stride >= kStrideLimit) return invalid(why, "globalStrides[" + u64(i) + "] = " + u64(stride) + " is not < 2^40");
  }
  if (interleaved) {
    // An interleaved tensor is dense apart from padding: each stride covers the dimension
    // below it (cuda.h's globalStrides[i] = globalStrides[i - 1] * (globalDim[i] + padding[i])).
    uint64_t covered = r.global_dim[0] * uint64_t(type.bits) / 8;
    for (uint32_t i = 0; i + 1 < r.rank; ++i) {
      if (r.global_strides[i] < covered)
        return invalid(why, "globalStrides[" + u64(i) + "] = " + u64(r.global_strides[i]) +
                                " does not cover the dimension below it (" + u64(covered) + " bytes) in an interleaved layout");
      covered = r.global_strides[i] * r.global_dim[i + 1];
    }
  }

  for (uint32_t i = 0; i < r.rank; ++i)
    if (r.box_dim[i] == 0 || r.box_dim[i] > kMaxBoxDim)
      return invalid(why, "boxDim[" + u64(i) + "] = " + u64(r.box_dim[i]) + " is not in 1..256");
  const uint64_t inner_box_bits = uint64_t(r.box_dim[0]) * uint64_t(type.bits);
  if (!interleaved && inner_box_bits % 128 != 0)
    return invalid(why, "boxDim[0] * elementSize = " + u64(inner_box_bits / 8) + " bytes is not a multiple of 16");
  if (aligned16_packed(r.data_type) && r.box_dim[0] != 128)
    return invalid(why, "boxDim[0] must be 128 for the 16U4_ALIGN16B and 16U6_ALIGN16B types");

  for (uint32_t i = 0; i < r.rank; ++i)
    if (r.element_strides[i] == 0 || r.element_strides[i] > kMaxElementStride)
      return invalid(why, "elementStrides[" + u64(i) + "] = " + u64(r.element_strides[i]) + " is not in 1..8");

  if (!interleaved && r.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner_box_bits / 8 > swizzle_span_bytes(r.swizzle))
    return invalid(why, "the box's inner dimension (" + u64(inner_box_bits / 8) + " bytes) exceeds the swizzle span of " +
                            u64(swizzle_span_bytes(r.swizzle)) + " bytes");
  if (r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && r.swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
    return invalid(why, "CU_TENSOR_MAP_INTERLEAVE_32B requires CU_TENSOR_MAP_SWIZZLE_32B");
  if (r.data_type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) {
    if (interleaved) return invalid(why, "the 16U6_ALIGN16B type requires CU_TENSOR_MAP_INTERLEAVE_NONE");
    if (r.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B &&
        r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B && r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
      return invalid(why, "the 16U6_ALIGN16B type allows swizzle NONE, 128B, 128B_ATOM_32B and 128B_ATOM_64B only");
  }
  if (r.data_type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B && r.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE &&
      r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B && r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B)
    return invalid(why, "the 16U4_ALIGN16B type allows swizzle NONE, 128B and 128B_ATOM_32B only");

  if (r.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && (!type.is_float || type.packed))
    return invalid(why, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType");

  if (type.packed) {
    why = "the packed 16U4/16U6 data types are legal but not emulated";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

}  // namespace

CUresult encode_tiled_tensor_map(const TiledTensorMapRequest& r, std::string& why) {
  if (CUresult result = check(r, why)) return result;
  TensorMap map;
  map.magic = TensorMap::kMagic;
  map.data_type = static_cast<uint8_t>(r.data_type);
  map.rank = static_cast<uint8_t>(r.rank);
  map.interleave = static_cast<uint8_t>(r.interleave);
  map.swizzle = static_cast<uint8_t>(r.swizzle);
  map.l2_promotion = static_cast<uint8_t>(r.l2_promotion);
  map.oob_fill = static_cast<uint8_t>(r.oob_fill);
  map.element_bytes = static_cast<uint8_t>(facts_of(r.data_type).bits / 8);
  map.global_address = reinterpret_cast<uintptr_t>(r.global_address);
  for (uint32_t i = 0; i < r.rank; ++i) {
    map.element_strides[i] = static_cast<uint8_t>(r.element_strides[i]);
    map.box_dim[i] = r.box_dim[i];
    map.global_dim[i] = r.global_dim[i];
    map.global_stride[i] = i == 0 ? map.element_bytes : r.global_strides[i - 1];
  }
  std::memset(r.tensor_map, 0, sizeof(CUtensorMap));
  std::memcpy(r.tensor_map, &map, sizeof map);
  return CUDA_SUCCESS;
}

CUresult replace_tensor_map_address(CUtensorMap* tensor_map, void* global_address, std::string& why) {
  if (tensor_map == nullptr || reinterpret_cast<uintptr_t>(tensor_map) % 64 != 0)
    return invalid(why, "tensorMap is null or not 64-byte aligned");
  TensorMap map;
  std::memcpy(static_cast<void*>(&map), tensor_map, sizeof map);
  if (map.magic != TensorMap::kMagic) return invalid(why, "tensorMap was not made by cuTensorMapEncodeTiled");
  const uintptr_t address = reinterpret_cast<uintptr_t>(global_address);
  const uintptr_t alignment = map.interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (address % alignment != 0) return invalid(why, "globalAddress is not " + u64(alignment) + "-byte aligned");
  map.global_address = address;
  std::memcpy(tensor_map, &map, sizeof map);
  return CUDA_SUCCESS;
}

}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  std::string why;
  CUresult result = encode_tiled_tensor_map({tensorMap, tensorDataType, tensorRank, globalAddress, globalDim,
                                             globalStrides, boxDim, elementStrides, interleave, swizzle, l2Promotion,
                                             oobFill},
                                            why);
  // The real driver says nothing; a line naming the broken rule saves a debugging session.
  if (result != CUDA_SUCCESS) std::fprintf(stderr, "ptxemu: cuTensorMapEncodeTiled: %s\n", why.c_str());
  return result;
}

CUresult cuTensorMapReplaceAddress(CUtensorMap* tensorMap, void* globalAddress) {
  std::string why;
  CUresult result = replace_tensor_map_address(tensorMap, globalAddress, why);
  if (result != CUDA_SUCCESS) std::fprintf(stderr, "ptxemu: cuTensorMapReplaceAddress: %s\n", why.c_str());
  return result;
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const int*, const int*, cuuint32_t, cuuint32_t,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill) {
  std::fputs("ptxemu: cuTensorMapEncodeIm2col: im2col tensor maps are not emulated\n", stderr);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, int, int, cuuint32_t, cuuint32_t, const cuuint32_t*,
                                     CUtensorMapInterleave, CUtensorMapIm2ColWideMode, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::fputs("ptxemu: cuTensorMapEncodeIm2colWide: im2col tensor maps are not emulated\n", stderr);
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
