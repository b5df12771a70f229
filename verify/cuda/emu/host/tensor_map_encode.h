// cuTensorMapEncodeTiled's work: every requirement the CUDA driver API documents for a tiled
// tensor map (cuda.h's comment of cuTensorMapEncodeTiled, "Tensor Map Object Management"),
// then kgen's TensorMap encoding (tensor/tensor_map.h) in the 128 opaque bytes.
#pragma once

#include <cuda.h>

#include <string>

namespace kgen::emu {

struct TiledTensorMapRequest {
  CUtensorMap* tensor_map = nullptr;
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  cuuint32_t rank = 0;
  void* global_address = nullptr;
  const cuuint64_t* global_dim = nullptr;
  const cuuint64_t* global_strides = nullptr;  // rank - 1 of them, bytes
  const cuuint32_t* box_dim = nullptr;
  const cuuint32_t* element_strides = nullptr;
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

// CUDA_SUCCESS after writing the map; otherwise the driver's error code (CUDA_ERROR_INVALID_VALUE
// for a violated requirement, CUDA_ERROR_NOT_SUPPORTED for a legal map the emulator cannot
// run: the packed 4- and 6-bit types) with `why` naming the rule. The map is untouched then.
CUresult encode_tiled_tensor_map(const TiledTensorMapRequest& request, std::string& why);

// cuTensorMapReplaceAddress's work on a map encode_tiled_tensor_map wrote.
CUresult replace_tensor_map_address(CUtensorMap* tensor_map, void* global_address, std::string& why);

}  // namespace kgen::emu
