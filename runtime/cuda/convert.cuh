// f32 to the kernel's 16-bit element type (bfloat16 or half), in the same order and two at a
// time (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32): P before its product with V, O before its
// store, the backward's P^T, dS^T, dK and dV. Every CUDA kernel converts through here.
#pragma once

#include <cute/config.hpp>
#include <cute/tensor.hpp>
#include <cutlass/array.h>
#include <cutlass/numeric_conversion.h>

namespace kgen {
namespace cuda {

// kCount values from `source` to `destination` (registers; any type whose storage holds
// kCount Elements).
template <class Element, int kCount>
CUTE_DEVICE void convert_to_element(float const* source, void* destination) {
  static_assert(sizeof(Element) == 2 && kCount % 2 == 0, "pairs of 16-bit values");
  cutlass::NumericArrayConverter<Element, float, kCount> convert;
  *reinterpret_cast<cutlass::Array<Element, kCount>*>(destination) =
      convert(*reinterpret_cast<cutlass::Array<float, kCount> const*>(source));
}

// A register fragment into one of Elements of the same size, element by element.
template <class Element, class Source, class Destination>
CUTE_DEVICE void convert_fragment(Source const& source, Destination& destination) {
  constexpr int kCount = decltype(cute::size(source))::value;
  static_assert(decltype(cute::size(destination))::value == kCount, "fragments of one size");
  convert_to_element<Element, kCount>(source.data(), destination.data());
}

}  // namespace cuda
}  // namespace kgen
