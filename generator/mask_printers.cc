#include "mask_printers.h"

#include <utility>
#include <vector>

namespace kgen {
namespace {

using Op = MaskNode::Op;

// "i", "i + 5", "i - 3".
std::string row_plus(int64_t c) {
  if (c == 0) return "i";
  return c > 0 ? "i + " + std::to_string(c) : "i - " + std::to_string(-c);
}

// One SSA definition per line, `%name = rhs`; the last one is the program's result. Every
// name, the positions' included, carries the suffix.
class MlirLines {
 public:
  MlirLines(std::string i32_type, std::string i1_type, std::string suffix)
      : i32_(std::move(i32_type)), i1_(std::move(i1_type)), suffix_(std::move(suffix)) {}

  // Defines %mask_<n>, and the values it needs as %mask_<n>_<part>.
  void node(const MaskProgram& program, int n) {
    const MaskNode& node = program.nodes[n];
    const std::string name = "mask_" + std::to_string(n);
    switch (node.op) {
      case Op::kTrue:
        return define(name, "arith.constant dense<true> : " + i1_);
      case Op::kKeyAtMost:
      case Op::kKeyAtLeast: {
        // i + 0 is i itself: no constant and no addition.
        std::string bound = ref("q_pos");
        if (node.c != 0) {
          define(name + "_c", constant(node.c));
          define(name + "_bound", "arith.addi " + ref("q_pos") + ", " + ref(name + "_c") + " : " + i32_);
          bound = ref(name + "_bound");
        }
        const char* predicate = node.op == Op::kKeyAtMost ? "sle" : "sge";
        return define(name, std::string("arith.cmpi ") + predicate + ", " + ref("kv_pos") + ", " + bound + " : " + i32_);
      }
      case Op::kKeyBelow:
        define(name + "_c", constant(node.c));
        return define(name, "arith.cmpi slt, " + ref("kv_pos") + ", " + ref(name + "_c") + " : " + i32_);
      case Op::kSameChunk:
        define(name + "_c", constant(node.c));
        define(name + "_q", "arith.divsi " + ref("q_pos") + ", " + ref(name + "_c") + " : " + i32_);
        define(name + "_kv", "arith.divsi " + ref("kv_pos") + ", " + ref(name + "_c") + " : " + i32_);
        return define(name, "arith.cmpi eq, " + ref(name + "_q") + ", " + ref(name + "_kv") + " : " + i32_);
      case Op::kAnd:
      case Op::kOr: {
        // A left fold of binary ops: %mask_<n>_1 ... %mask_<n>.
        const std::string op = node.op == Op::kAnd ? "arith.andi " : "arith.ori ";
        std::string acc = ref("mask_" + std::to_string(node.operands[0]));
        for (std::size_t k = 1; k < node.operands.size(); ++k) {
          const std::string step = k + 1 == node.operands.size() ? name : name + "_" + std::to_string(k);
          define(step, op + acc + ", " + ref("mask_" + std::to_string(node.operands[k])) + " : " + i1_);
          acc = ref(step);
        }
        return;
      }
    }
  }

  MlirMaskOps finish() {
    MlirMaskOps out;
    for (std::size_t k = 0; k + 1 < lines_.size(); ++k)
      out.ops += (k ? "\n%" : "%") + lines_[k].first + " = " + lines_[k].second;
    out.result = lines_.back().second;
    return out;
  }

 private:
  std::string constant(int64_t c) const { return "arith.constant dense<" + std::to_string(c) + "> : " + i32_; }
  std::string ref(const std::string& name) const { return "%" + name + suffix_; }
  void define(const std::string& name, std::string rhs) { lines_.emplace_back(name + suffix_, std::move(rhs)); }

  std::string i32_, i1_, suffix_;
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace

std::string mask_cpp_expression(const MaskProgram& program) {
  std::vector<std::string> text;
  for (const MaskNode& node : program.nodes) {
    switch (node.op) {
      case Op::kTrue: text.push_back("true"); break;
      case Op::kKeyAtMost: text.push_back("j <= " + row_plus(node.c)); break;
      case Op::kKeyAtLeast: text.push_back("j >= " + row_plus(node.c)); break;
      case Op::kKeyBelow: text.push_back("j < " + std::to_string(node.c)); break;
      case Op::kSameChunk: {
        const std::string c = std::to_string(node.c);
        text.push_back("i / " + c + " == j / " + c);
        break;
      }
      case Op::kAnd:
      case Op::kOr: {
        // Parenthesized, so operands need none: == and <= bind tighter than && and ||.
        std::string out = "(";
        for (std::size_t k = 0; k < node.operands.size(); ++k)
          out += (k ? (node.op == Op::kAnd ? " && " : " || ") : "") + text[node.operands[k]];
        text.push_back(out + ")");
        break;
      }
    }
  }
  return text.back();
}

MlirMaskOps mask_mlir_ops(const MaskProgram& program, const std::string& i32_type, const std::string& i1_type,
                          const std::string& suffix) {
  MlirLines lines(i32_type, i1_type, suffix);
  for (std::size_t n = 0; n < program.nodes.size(); ++n) lines.node(program, static_cast<int>(n));
  return lines.finish();
}

}  // namespace kgen
