#include "mask_lowering.h"

#include <algorithm>
#include <stdexcept>

namespace kgen {
namespace {

using Op = MaskNode::Op;

int64_t clamp_constant(int64_t c) { return std::clamp(c, -kMaskConstantLimit, kMaskConstantLimit); }

// True when `mask` allows every (i, j) whatever the positions: such a subtree becomes no
// node at all, so and/or never carry a constant operand.
bool always(const Mask& mask) {
  switch (mask.kind) {
    case Mask::Kind::kFull:
      return true;
    case Mask::Kind::kLocal:
      return !mask.left && !mask.right;
    case Mask::Kind::kAnd:
      return std::all_of(mask.children.begin(), mask.children.end(), always);
    case Mask::Kind::kOr:
      return std::any_of(mask.children.begin(), mask.children.end(), always);
    default:
      return false;
  }
}

class Lowering {
 public:
  MaskProgram finish(std::optional<int> root) {
    if (!root) add({Op::kTrue, 0, {}});
    return std::move(program_);
  }

  // Appends the nodes of a mask that is not `always`; returns the index of its result.
  int lower(const Mask& mask) {
    switch (mask.kind) {
      case Mask::Kind::kCausal:
        return leaf(Op::kKeyAtMost, mask.offset);
      case Mask::Kind::kLocal: {
        std::vector<int> bounds;
        if (mask.left) bounds.push_back(leaf(Op::kKeyAtLeast, mask.offset - *mask.left));
        if (mask.right) bounds.push_back(leaf(Op::kKeyAtMost, mask.offset + *mask.right));
        return combine(Op::kAnd, bounds);
      }
      case Mask::Kind::kChunkedCausal: {
        const int same_chunk = leaf(Op::kSameChunk, mask.chunk);
        return combine(Op::kAnd, {same_chunk, leaf(Op::kKeyAtMost, 0)});
      }
      case Mask::Kind::kPrefixLm: {
        const int in_prefix = leaf(Op::kKeyBelow, mask.prefix);
        return combine(Op::kOr, {in_prefix, leaf(Op::kKeyAtMost, 0)});
      }
      case Mask::Kind::kAnd:
      case Mask::Kind::kOr: {
        // An and drops its `always` children; an or has none (it would be `always` itself).
        std::vector<int> operands;
        for (const Mask& child : mask.children)
          if (!always(child)) operands.push_back(lower(child));
        return combine(mask.kind == Mask::Kind::kAnd ? Op::kAnd : Op::kOr, operands);
      }
      case Mask::Kind::kFull:
      case Mask::Kind::kExplicit:
        break;
    }
    throw std::logic_error("lower_mask: a full or explicit mask has no comparison to lower");
  }

  int leaf(Op op, int64_t c) { return add({op, clamp_constant(c), {}}); }

  int combine(Op op, std::vector<int> operands) {
    return operands.size() == 1 ? operands.front() : add({op, 0, std::move(operands)});
  }

 private:
  int add(MaskNode node) {
    program_.nodes.push_back(std::move(node));
    return static_cast<int>(program_.nodes.size()) - 1;
  }

  MaskProgram program_;
};

}  // namespace

bool MaskProgram::evaluate(int64_t i, int64_t j) const {
  std::vector<char> value(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const MaskNode& node = nodes[n];
    switch (node.op) {
      case Op::kTrue: value[n] = true; break;
      case Op::kKeyAtMost: value[n] = j <= i + node.c; break;
      case Op::kKeyAtLeast: value[n] = j >= i + node.c; break;
      case Op::kKeyBelow: value[n] = j < node.c; break;
      case Op::kSameChunk: value[n] = i / node.c == j / node.c; break;
      case Op::kAnd:
        value[n] = std::all_of(node.operands.begin(), node.operands.end(), [&](int k) { return value[k]; });
        break;
      case Op::kOr:
        value[n] = std::any_of(node.operands.begin(), node.operands.end(), [&](int k) { return value[k]; });
        break;
    }
  }
  return value.back();
}

MaskProgram lower_mask(const Mask& mask, std::optional<int64_t> kv_len) {
  if (!mask.is_predicate()) throw std::logic_error("lower_mask: an explicit mask has no predicate");
  Lowering lowering;
  std::optional<int> root;
  if (!always(mask)) root = lowering.lower(mask);
  if (kv_len) {
    const int tail = lowering.leaf(Op::kKeyBelow, *kv_len);
    root = root ? lowering.combine(Op::kAnd, {*root, tail}) : tail;
  }
  return lowering.finish(root);
}

}  // namespace kgen
