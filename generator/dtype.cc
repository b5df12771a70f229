#include "dtype.h"

#include <array>
#include <stdexcept>

namespace kgen {
namespace {

constexpr std::array<DTypeInfo, 3> kDTypes = {{
    {DType::kBFloat16, "bfloat16", 2, "bf16", "cutlass::bfloat16_t", "BF16BF16",
     "16-bit brain float: __nv_bfloat16, cutlass::bfloat16_t, torch.bfloat16"},
    {DType::kFloat16, "float16", 2, "f16", "cutlass::half_t", "F16F16",
     "16-bit IEEE half: __half, cutlass::half_t, torch.float16"},
    {DType::kFloat32, "float32", 4, "f32", "", "", "32-bit IEEE float: float, torch.float32"},
}};

}  // namespace

const DTypeInfo& dtype_info(DType dtype) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == dtype) return info;
  throw std::logic_error("a DType without a row in the dtype table");
}

const DTypeInfo* find_dtype_by_spec_name(const std::string& spec_name) {
  for (const DTypeInfo& info : kDTypes)
    if (spec_name == info.spec_name) return &info;
  return nullptr;
}

const DTypeInfo* find_dtype_by_mlir_type(const std::string& mlir_type) {
  for (const DTypeInfo& info : kDTypes)
    if (mlir_type == info.mlir_type) return &info;
  return nullptr;
}

std::string dtype_spec_names() {
  std::string names;
  for (std::size_t k = 0; k < kDTypes.size(); ++k)
    names += std::string(k == 0 ? "" : k + 1 == kDTypes.size() ? " or " : ", ") + kDTypes[k].spec_name;
  return names;
}

}  // namespace kgen
