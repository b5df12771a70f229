// TMA tile mode: cp.async.bulk.tensor.{1..5}d with .tile, between global memory described by a
// TensorMap (tensor_map.h) and a box in one CTA's shared memory. PTX ISA "Tensors" (bounding box,
// traversal stride, out-of-bound access, swizzling) and the driver API's cuTensorMapEncodeTiled.
//
// The box in shared memory: dimension 0 innermost and dense, rows of box_dim[0] * element_bytes
// bytes one after another (no padding), ceil(box_dim[i] / element_strides[i]) entries along
// dimension i >= 1. Element (i0, i1, ...) of the box is global element
// (c0 + i0, c1 + i1 * element_strides[1], ...) for the instruction's coordinates c; it lies at
// byte offset L * element_bytes from the destination, L = i0 + n0 * (i1 + n1 * (i2 + ...)), and
// the swizzle then moves its 16-byte (or, for 128B_ATOM_32B, 32-byte) chunk by the bits of the
// resulting shared-window address (swizzle.h). Out-of-bound elements (any coordinate < 0 or
// >= global_dim) are filled, never read; a store skips them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "tensor/swizzle.h"
#include "tensor/tensor_map.h"

namespace kgen::emu {

// Reads `out.size()` bytes of global memory at `address` (the executor's, which throws for an
// address outside every allocation).
using GlobalRead = std::function<void(uint64_t address, std::span<uint8_t> out)>;
// Writes `bytes` to global memory at `address`.
using GlobalWrite = std::function<void(uint64_t address, std::span<const uint8_t> bytes)>;

// How many entries the box has along dimension `dim`: box_dim[dim] for dimension 0 (the ISA has
// no traversal stride for dimension 0 of a non-interleaved tensor: element_strides[0] is
// ignored), ceil(box_dim[dim] / element_strides[dim]) for the others.
uint32_t box_extent(const TensorMap& map, int dim);

// The bytes one load or store moves into or out of shared memory, out-of-bound elements
// included: what the load's mbarrier complete_tx::bytes counts.
uint32_t box_bytes(const TensorMap& map);

// The swizzle CUtensorMapSwizzle `cu_swizzle` applies to shared addresses. Returns "" and sets
// `out`, or an error for 128B_ATOM_32B_FLIP_8B, 128B_ATOM_64B (no CuTe or ISA statement pins
// their bit functions down: unsupported) and values no cuda.h defines.
std::string tma_swizzle(uint8_t cu_swizzle, Swizzle* out);

// What makes a map and a destination unusable for tile mode; "" when they are usable. Checks the
// magic, rank, interleave (NONE only), element size, the data type (the packed 4- and 6-bit types
// are unsupported), the OOB fill (NaN only for floating-point types), the swizzle, the shared
// address's alignment (128 bytes, the ISA's requirement for the shared operand; for a swizzled map
// also the pattern's repeat: 256/512/1024 bytes for 32B/64B/128B. The swizzle is a function of the
// address bits, so an unaligned box would still be defined, but it would start mid-pattern where
// CuTe's layouts and every kgen kernel assume the pattern's first row: refused, so that a kernel
// whose tiles are misplaced is a finding rather than a silently different layout) and that the box
// fits in `shared_bytes` bytes of shared memory.
std::string check_tma_tile(const TensorMap& map, size_t coordinate_count, uint32_t shared_address,
                           size_t shared_bytes);

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile: copies the box at `coordinates` (one per
// rank, signed: a box may start before the tensor or run past its end) into `shared`, whose byte i
// is shared-window address i of the CTA, at `shared_address`. Out-of-bound elements become zero,
// or the canonical NaN of the type (f16/bf16 0x7fff, f32/tf32 0x7fffffff, f64 0x7ff8000000000000)
// for CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA. Returns "" or what check_tma_tile found
// (nothing is written then); exceptions from `read` pass through.
std::string tma_load_tile(const TensorMap& map, std::span<const int32_t> coordinates,
                          std::span<uint8_t> shared, uint32_t shared_address, const GlobalRead& read);

// cp.async.bulk.tensor.Nd.global.shared::cta.tile: the inverse, the box at `shared_address` (in the
// same swizzled layout) written to the in-bound part of the tensor window at `coordinates`;
// out-of-bound elements are not written.
std::string tma_store_tile(const TensorMap& map, std::span<const int32_t> coordinates,
                           std::span<const uint8_t> shared, uint32_t shared_address, const GlobalWrite& write);

// The shared-window address element `box_index` (i0, i1, ... in box entries, one per rank) of the
// box lands at for a destination at `shared_address`, given the map's swizzle (which must be one
// tma_swizzle supports). The rule the load and store use, exposed for tests and diagnostics.
uint32_t tma_box_element_address(const TensorMap& map, std::span<const uint32_t> box_index,
                                 uint32_t shared_address);

}  // namespace kgen::emu
