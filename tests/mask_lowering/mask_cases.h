// The masks and position windows on which the one mask lowering (generator/mask_lowering.h)
// and its printers are checked against Mask::allowed, the literal table of
// docs/spec-format.md ("Masks"): every predicate kind, constants on both sides of every
// edge of a 40-position window and beyond the clamp limit in both directions, nested and/or
// with always-true children, and the kv tail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mask.h"
#include "mask_lowering.h"

namespace kgen::mask_cases {

// Positions checked: i in [q_first, q_first + kSide), j in [kv_first, kv_first + kSide).
constexpr int64_t kSide = 40;
constexpr int64_t kLastWindow = (int64_t{1} << 21) - kSide;  // the largest positions a spec has
struct Window {
  int64_t q_first, kv_first;
};
inline const std::vector<Window> kWindows = {{0, 0}, {0, kLastWindow}, {kLastWindow, 0}, {kLastWindow, kLastWindow}};

// A mask, and for the kernel whose last kv block is ragged, the key count it also requires.
struct Case {
  Mask mask;
  std::optional<int64_t> kv_len;

  std::string name() const {
    return mask.identity() + (kv_len ? " with j < " + std::to_string(*kv_len) : std::string());
  }
  bool allowed(int64_t i, int64_t j) const { return mask.allowed(i, j) && (!kv_len || j < *kv_len); }
};

inline Mask leaf(Mask::Kind kind) {
  Mask m;
  m.kind = kind;
  return m;
}
inline Mask causal(int64_t offset) {
  Mask m = leaf(Mask::Kind::kCausal);
  m.offset = offset;
  return m;
}
inline Mask local(std::optional<int64_t> left, std::optional<int64_t> right, int64_t offset) {
  Mask m = leaf(Mask::Kind::kLocal);
  m.left = left;
  m.right = right;
  m.offset = offset;
  return m;
}
inline Mask chunked(int64_t chunk) {
  Mask m = leaf(Mask::Kind::kChunkedCausal);
  m.chunk = chunk;
  return m;
}
inline Mask prefix(int64_t length) {
  Mask m = leaf(Mask::Kind::kPrefixLm);
  m.prefix = length;
  return m;
}
inline Mask tree(Mask::Kind kind, std::vector<Mask> children) {
  Mask m = leaf(kind);
  m.children = std::move(children);
  return m;
}

// Every predicate mask of the checks, without the kv tail.
inline std::vector<Mask> masks() {
  constexpr int64_t kLimit = kMaskConstantLimit, kSpecMax = int64_t{1} << 32;
  using K = Mask::Kind;
  using Values = std::vector<int64_t>;
  std::vector<Mask> out = {leaf(K::kFull)};
  for (int64_t offset : Values{-kSpecMax, -kLimit - 1, -kLimit, -kLimit + 1, -41, -40, -39, -7, -1, 0, 1, 6, 39, 40,
                               kLimit - 1, kLimit, kLimit + 1, kSpecMax})
    out.push_back(causal(offset));
  const std::vector<std::optional<int64_t>> sides = {std::nullopt, 0, 1, 9, 45, kSpecMax};
  for (const auto& left : sides)
    for (const auto& right : sides)
      for (int64_t offset : Values{-kSpecMax, -12, 0, 5, kSpecMax}) out.push_back(local(left, right, offset));
  for (int64_t chunk : Values{1, 2, 3, 7, 8, 39, 40, 41, kLimit - 1, kLimit, kLimit + 1, kSpecMax})
    out.push_back(chunked(chunk));
  for (int64_t length : Values{0, 1, 13, 39, 40, 41, kLimit, kLimit + 1, kSpecMax}) out.push_back(prefix(length));
  // Trees: nesting, three operands, always-true children on either side of and/or.
  out.push_back(tree(K::kAnd, {causal(0), local(9, std::nullopt, 0)}));
  out.push_back(tree(K::kOr, {prefix(5), chunked(8)}));
  out.push_back(tree(K::kOr, {causal(-20), tree(K::kAnd, {prefix(10), causal(3)}), chunked(16)}));
  out.push_back(tree(K::kAnd, {leaf(K::kFull), causal(2)}));
  out.push_back(tree(K::kAnd, {causal(2), local(std::nullopt, std::nullopt, 3), leaf(K::kFull)}));
  out.push_back(tree(K::kOr, {causal(2), leaf(K::kFull)}));
  out.push_back(tree(K::kOr, {tree(K::kAnd, {leaf(K::kFull), leaf(K::kFull)}), causal(-3)}));
  out.push_back(tree(K::kAnd, {tree(K::kOr, {causal(-30), prefix(4)}), tree(K::kOr, {chunked(5), local(0, 2, 20)})}));
  out.push_back(tree(K::kOr, {tree(K::kAnd, {tree(K::kOr, {tree(K::kAnd, {chunked(12), causal(-1)}), prefix(2)}),
                                             local(17, 0, -kSpecMax)}),
                              causal(-kLimit - 5)}));
  out.push_back(tree(K::kAnd, {tree(K::kAnd, {causal(kSpecMax), chunked(kSpecMax)}), prefix(kSpecMax)}));
  out.push_back(tree(K::kOr, {local(3, 3, -25), local(3, 3, 25), local(0, 0, 0)}));
  return out;
}

// Every mask without a tail, and every mask with each tail in `kv_lens`.
inline std::vector<Case> cases(const std::vector<int64_t>& kv_lens) {
  std::vector<Case> out;
  for (const Mask& mask : masks()) {
    out.push_back({mask, std::nullopt});
    for (int64_t kv_len : kv_lens) out.push_back({mask, kv_len});
  }
  return out;
}

}  // namespace kgen::mask_cases
