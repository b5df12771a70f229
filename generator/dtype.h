// The element types a spec may name (docs/spec-format.md §1), with every spelling a target or
// tool needs: one table, so a new type or spelling is one row.
#pragma once

#include <string>

namespace kgen {

enum class DType { kBFloat16, kFloat16, kFloat32 };

struct DTypeInfo {
  DType dtype;
  const char* spec_name;      // "bfloat16": specs, MANIFEST.json, operands files, npy names
  int bytes;
  const char* mlir_type;      // "bf16": Mosaic MLIR element types
  const char* cutlass_type;   // "cutlass::bfloat16_t"; "" without a CUDA path (float32)
  const char* wgmma_letters;  // "BF16BF16": the A/B part of CuTe's SM90 wgmma atom names
  const char* cuda_spelling;  // what a user of the CUDA launcher passes, for its header
};

const DTypeInfo& dtype_info(DType dtype);
// nullptr when no row has that spelling.
const DTypeInfo* find_dtype_by_spec_name(const std::string& spec_name);
const DTypeInfo* find_dtype_by_mlir_type(const std::string& mlir_type);
// "bfloat16, float16 or float32", for error messages.
std::string dtype_spec_names();

inline const char* dtype_name(DType dtype) { return dtype_info(dtype).spec_name; }
inline int dtype_bytes(DType dtype) { return dtype_info(dtype).bytes; }

}  // namespace kgen
