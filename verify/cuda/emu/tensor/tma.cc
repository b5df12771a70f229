#include "tensor/tma.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace kgen::emu {
namespace {

// CUtensorMapDataType values (cuda.h) and the bytes of one element of each; 0 for the packed
// sub-byte types, which tile mode here does not support.
constexpr std::array<uint8_t, 16> kTypeBytes = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0, 0, 0};
constexpr uint8_t kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9, kFloat32Ftz = 10, kTfloat32 = 11,
                  kTfloat32Ftz = 12;
constexpr uint8_t kOobFillNan = 1;  // CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA

bool is_float_type(uint8_t type) {
  return type == kFloat16 || type == kFloat32 || type == kFloat64 || type == kBfloat16 || type == kFloat32Ftz ||
         type == kTfloat32 || type == kTfloat32Ftz;
}

// The canonical NaN of a floating-point type, little-endian in `out` (element_bytes long).
void canonical_nan(uint8_t type, std::span<uint8_t> out) {
  uint64_t bits = 0;
  if (type == kFloat16 || type == kBfloat16) bits = 0x7fffu;
  else if (type == kFloat64) bits = 0x7ff8000000000000ull;
  else bits = 0x7fffffffu;
  std::memcpy(out.data(), &bits, out.size());
}

Swizzle swizzle_of(const TensorMap& map) {
  Swizzle swizzle;
  tma_swizzle(map.swizzle, &swizzle);
  return swizzle;
}

// Calls `visit(row_offset_elements, global_coordinates)` for every row of the box (one per
// combination of box indices along dimensions 1..rank-1), dimension 1 fastest, with the global
// coordinate of each dimension >= 1 (dimension 0's entry is the box's start coordinate).
template <class Visit>
void for_each_row(const TensorMap& map, std::span<const int32_t> coordinates, Visit visit) {
  const int rank = map.rank;
  std::array<uint32_t, TensorMap::kMaxRank> index{};
  uint64_t rows = 1;
  for (int d = 1; d < rank; ++d) rows *= box_extent(map, d);
  const uint32_t row_elements = box_extent(map, 0);
  for (uint64_t row = 0; row < rows; ++row) {
    std::array<int64_t, TensorMap::kMaxRank> global{};
    global[0] = coordinates[0];
    for (int d = 1; d < rank; ++d) {
      const uint32_t stride = map.element_strides[d] == 0 ? 1 : map.element_strides[d];
      global[d] = int64_t{coordinates[d]} + int64_t{index[d]} * stride;
    }
    visit(row * row_elements, global);
    for (int d = 1; d < rank; ++d) {  // odometer over the box's rows
      if (++index[d] < box_extent(map, d)) break;
      index[d] = 0;
    }
  }
}

// The in-bound elements [first, last) of a row of the box whose coordinates along dimensions >= 1
// are `global`; first == last when the row lies outside the tensor.
std::pair<uint32_t, uint32_t> in_bound_run(const TensorMap& map, const std::array<int64_t, TensorMap::kMaxRank>& global) {
  for (int d = 1; d < map.rank; ++d)
    if (global[d] < 0 || global[d] >= static_cast<int64_t>(map.global_dim[d])) return {0, 0};
  const int64_t start = global[0];
  const int64_t n = box_extent(map, 0);
  const int64_t first = std::clamp<int64_t>(-start, 0, n);
  const int64_t last = std::clamp<int64_t>(static_cast<int64_t>(map.global_dim[0]) - start, first, n);
  return {static_cast<uint32_t>(first), static_cast<uint32_t>(last)};
}

uint64_t global_address_of(const TensorMap& map, const std::array<int64_t, TensorMap::kMaxRank>& global, uint32_t first) {
  int64_t offset = (global[0] + first) * int64_t{map.element_bytes};
  for (int d = 1; d < map.rank; ++d) offset += global[d] * static_cast<int64_t>(map.global_stride[d]);
  return map.global_address + static_cast<uint64_t>(offset);
}

}  // namespace

uint32_t box_extent(const TensorMap& map, int dim) {
  if (dim == 0) return map.box_dim[0];
  const uint32_t stride = map.element_strides[dim] == 0 ? 1 : map.element_strides[dim];
  return (map.box_dim[dim] + stride - 1) / stride;
}

uint32_t box_bytes(const TensorMap& map) {
  uint32_t bytes = map.element_bytes;
  for (int d = 0; d < map.rank; ++d) bytes *= box_extent(map, d);
  return bytes;
}

std::string tma_swizzle(uint8_t cu_swizzle, Swizzle* out) {
  switch (cu_swizzle) {
    case 0: *out = kSwizzleNone; return "";
    case 1: *out = kSwizzle32B; return "";
    case 2: *out = kSwizzle64B; return "";
    case 3: *out = kSwizzle128B; return "";
    case 4: *out = kSwizzle128BAtom32B; return "";
    case 5: return "TMA swizzle CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B is not supported by the emulator";
    case 6: return "TMA swizzle CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B is not supported by the emulator";
    default: return "TMA swizzle " + std::to_string(cu_swizzle) + " is not a CUtensorMapSwizzle";
  }
}

std::string check_tma_tile(const TensorMap& map, size_t coordinate_count, uint32_t shared_address, size_t shared_bytes) {
  if (map.magic != TensorMap::kMagic) return "the tensor map was not encoded by cuTensorMapEncodeTiled";
  if (map.rank < 1 || map.rank > TensorMap::kMaxRank) return "tensor map rank " + std::to_string(map.rank) + " is not 1..5";
  if (coordinate_count != map.rank)
    return "the instruction gives " + std::to_string(coordinate_count) + " coordinates for a rank-" +
           std::to_string(map.rank) + " tensor map";
  if (map.interleave != 0) return "TMA interleaved layouts (CU_TENSOR_MAP_INTERLEAVE_16B/32B) are not supported by the emulator";
  if (map.data_type >= kTypeBytes.size()) return "tensor map data type " + std::to_string(map.data_type) + " is not a CUtensorMapDataType";
  if (kTypeBytes[map.data_type] == 0)
    return "the packed 4- and 6-bit TMA data types (CU_TENSOR_MAP_DATA_TYPE_16U4/16U6) are not supported by the emulator";
  if (map.element_bytes != kTypeBytes[map.data_type])
    return "tensor map element size " + std::to_string(map.element_bytes) + " does not match its data type";
  if (map.oob_fill > kOobFillNan) return "tensor map OOB fill " + std::to_string(map.oob_fill) + " is not a CUtensorMapFloatOOBfill";
  if (map.oob_fill == kOobFillNan && !is_float_type(map.data_type))
    return "NaN out-of-bound fill needs a floating-point data type";
  for (int d = 0; d < map.rank; ++d)
    if (map.box_dim[d] == 0) return "tensor map box dimension " + std::to_string(d) + " is 0";
  if (map.box_dim[0] * map.element_bytes % 16 != 0) return "the box's inner dimension is not a multiple of 16 bytes";
  Swizzle swizzle;
  if (std::string error = tma_swizzle(map.swizzle, &swizzle); !error.empty()) return error;
  if (swizzle.bits != 0 && map.box_dim[0] * map.element_bytes > swizzle.span_bytes())
    return "the box's inner dimension (" + std::to_string(map.box_dim[0] * map.element_bytes) +
           " bytes) is wider than the swizzle span (" + std::to_string(swizzle.span_bytes()) + " bytes)";
  if (shared_address % 128 != 0)
    return "TMA shared memory address " + std::to_string(shared_address) + " is not 128-byte aligned";
  // No alignment to the swizzle pattern's repeat (1024 bytes for 128B) is required: the CUDA
  // Programming Guide (TMA swizzle) says that for a buffer not so aligned "there is an offset
  // between the swizzle pattern and the shared memory", i.e. the pattern follows the absolute
  // address, which is how tma_box_element_address (and wgmma's descriptors) apply it. CUTLASS's
  // sm90 kernels rely on it: their tensor storage is only 128-byte aligned.
  // The swizzle permutes chunks within a span, so the box's bytes stay inside the spans that
  // [shared_address, shared_address + box_bytes) touches.
  const uint64_t span = swizzle.span_bytes();
  const uint64_t end = (uint64_t{shared_address} + box_bytes(map) + span - 1) / span * span;
  if (end > shared_bytes)
    return "the TMA box [" + std::to_string(shared_address) + ", +" + std::to_string(box_bytes(map)) +
           ") runs past the CTA's " + std::to_string(shared_bytes) + " bytes of shared memory";
  return "";
}

uint32_t tma_box_element_address(const TensorMap& map, std::span<const uint32_t> box_index, uint32_t shared_address) {
  uint64_t linear = 0;
  for (int d = map.rank - 1; d >= 0; --d) linear = linear * box_extent(map, d) + box_index[d];
  return swizzle_of(map)(shared_address + static_cast<uint32_t>(linear * map.element_bytes));
}

std::string tma_load_tile(const TensorMap& map, std::span<const int32_t> coordinates, std::span<uint8_t> shared,
                          uint32_t shared_address, const GlobalRead& read) {
  if (std::string error = check_tma_tile(map, coordinates.size(), shared_address, shared.size()); !error.empty())
    return error;
  const Swizzle swizzle = swizzle_of(map);
  const uint32_t elem = map.element_bytes;
  const uint32_t row_bytes = box_extent(map, 0) * elem;
  std::vector<uint8_t> fill(elem, 0);
  if (map.oob_fill == kOobFillNan) canonical_nan(map.data_type, fill);
  std::vector<uint8_t> row(row_bytes);
  for_each_row(map, coordinates, [&](uint64_t row_offset, const auto& global) {
    for (uint32_t e = 0; e < row_bytes; e += elem) std::memcpy(row.data() + e, fill.data(), elem);
    const auto [first, last] = in_bound_run(map, global);
    if (last > first)
      read(global_address_of(map, global, first), std::span<uint8_t>(row.data() + first * elem, (last - first) * elem));
    const uint32_t row_address = shared_address + static_cast<uint32_t>(row_offset * elem);
    for (uint32_t chunk = 0; chunk < row_bytes; chunk += 16)  // swizzles move whole 16-byte chunks
      std::memcpy(shared.data() + swizzle(row_address + chunk), row.data() + chunk, 16);
  });
  return "";
}

std::string tma_store_tile(const TensorMap& map, std::span<const int32_t> coordinates, std::span<const uint8_t> shared,
                           uint32_t shared_address, const GlobalWrite& write) {
  if (std::string error = check_tma_tile(map, coordinates.size(), shared_address, shared.size()); !error.empty())
    return error;
  const Swizzle swizzle = swizzle_of(map);
  const uint32_t elem = map.element_bytes;
  const uint32_t row_bytes = box_extent(map, 0) * elem;
  std::vector<uint8_t> row(row_bytes);
  for_each_row(map, coordinates, [&](uint64_t row_offset, const auto& global) {
    const auto [first, last] = in_bound_run(map, global);
    if (last == first) return;
    const uint32_t row_address = shared_address + static_cast<uint32_t>(row_offset * elem);
    for (uint32_t chunk = 0; chunk < row_bytes; chunk += 16)
      std::memcpy(row.data() + chunk, shared.data() + swizzle(row_address + chunk), 16);
    write(global_address_of(map, global, first),
          std::span<const uint8_t>(row.data() + first * elem, (last - first) * elem));
  });
  return "";
}

}  // namespace kgen::emu
