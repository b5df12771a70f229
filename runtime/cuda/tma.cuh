// Global tensors as kgen's TMA descriptors see them, for every CUDA kernel: (rows, features,
// head, batch) with the feature dimension contiguous, or its transpose. Descriptor types are
// declared at no address (null_gmem) and built on the host from the caller's pointer and
// strides (row_major_tensor).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>

namespace kgen {
namespace cuda {

// A global tensor of shape (rows, features, head, batch) at no address: the type TMA
// descriptors are declared with.
template <class T, class Stride>
inline auto null_gmem() {
  return cute::make_tensor(cute::make_gmem_ptr(static_cast<T*>(nullptr)),
                           cute::Shape<int, int, int, int>{}, Stride{});
}

// (rows, features, head, batch) with features contiguous; and (features, rows, head, batch),
// the same tensor transposed (V as the forward's B operand of P V).
using RowMajorStride = cute::Stride<int64_t, cute::_1, int64_t, int64_t>;
using ColumnMajorStride = cute::Stride<cute::_1, int64_t, int64_t, int64_t>;

// A caller's tensor as the descriptors see it: (rows, features, heads, batch), features
// contiguous; `s` a launcher header's Strides (row, head and batch, in elements).
template <class T, class Strides>
auto row_major_tensor(T* pointer, int rows, int features, int heads, int batch, Strides const& s) {
  return cute::make_tensor(cute::make_gmem_ptr(pointer),
                           cute::make_shape(rows, features, heads, batch),
                           cute::make_stride(s.row, cute::_1{}, s.head, s.batch));
}

}  // namespace cuda
}  // namespace kgen
