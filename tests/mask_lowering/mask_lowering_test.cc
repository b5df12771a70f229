// The one mask lowering against Mask::allowed on every position of small windows: the
// program as evaluated, and the C++ printer's text as the host compiler compiles it.
// (The MLIR printer's text runs through MLIR in mask_mlir_test.cc.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mask_cases.h"
#include "mask_lowering.h"
#include "mask_printers.h"

namespace kgen {
namespace {

using mask_cases::Case;
using mask_cases::kSide;
using mask_cases::kWindows;

std::vector<int64_t> every_kv_len() {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= kSide; ++n) out.push_back(n);
  return out;
}

// '1'/'0' per (i, j) of every window, row-major, windows in order: what every check compares.
std::string expected_bits(const Case& c) {
  std::string out;
  for (const auto& w : kWindows)
    for (int64_t i = w.q_first; i < w.q_first + kSide; ++i)
      for (int64_t j = w.kv_first; j < w.kv_first + kSide; ++j) out += c.allowed(i, j) ? '1' : '0';
  return out;
}

std::string program_bits(const MaskProgram& program) {
  std::string out;
  for (const auto& w : kWindows)
    for (int64_t i = w.q_first; i < w.q_first + kSide; ++i)
      for (int64_t j = w.kv_first; j < w.kv_first + kSide; ++j) out += program.evaluate(i, j) ? '1' : '0';
  return out;
}

TEST(MaskLowering, ProgramsAreWellFormed) {
  for (const Case& c : mask_cases::cases({1, 40})) {
    const MaskProgram program = lower_mask(c.mask, c.kv_len);
    ASSERT_FALSE(program.nodes.empty()) << c.name();
    std::vector<int> uses(program.nodes.size());
    for (std::size_t n = 0; n < program.nodes.size(); ++n) {
      const MaskNode& node = program.nodes[n];
      EXPECT_LE(std::abs(node.c), kMaskConstantLimit) << c.name();
      if (node.op == MaskNode::Op::kTrue) {
        EXPECT_EQ(program.nodes.size(), 1u) << c.name();
      }
      if (node.op == MaskNode::Op::kSameChunk) {
        EXPECT_GE(node.c, 1) << c.name();
      }
      const bool combines = node.op == MaskNode::Op::kAnd || node.op == MaskNode::Op::kOr;
      EXPECT_EQ(node.operands.size() >= 2, combines) << c.name();
      for (int k : node.operands) {
        ASSERT_LT(k, static_cast<int>(n)) << c.name();
        ++uses[k];
      }
    }
    for (std::size_t n = 0; n + 1 < uses.size(); ++n) EXPECT_EQ(uses[n], 1) << c.name() << " node " << n;
  }
}

TEST(MaskLowering, ProgramEqualsTheMaskOnEveryPosition) {
  const std::vector<Case> cases = mask_cases::cases(every_kv_len());
  for (const Case& c : cases)
    ASSERT_EQ(program_bits(lower_mask(c.mask, c.kv_len)), expected_bits(c)) << c.name();
  std::printf("%zu cases x %zu positions\n", cases.size(), kWindows.size() * kSide * kSide);
}

TEST(MaskLowering, PlantedConstantErrorIsCaught) {
  // Every leaf's constant off by one, one program at a time: each must be told apart.
  int64_t planted = 0, caught = 0;
  for (const Case& c : mask_cases::cases({17})) {
    const MaskProgram program = lower_mask(c.mask, c.kv_len);
    for (std::size_t n = 0; n < program.nodes.size(); ++n) {
      MaskProgram wrong = program;
      MaskNode& node = wrong.nodes[n];
      const bool near = std::abs(node.c) < 100;  // a far constant compares like its neighbour
      if (node.operands.empty() && node.op != MaskNode::Op::kTrue && near && node.c != 1) {
        node.c += 1;
        ++planted;
        caught += program_bits(wrong) != expected_bits(c);
      }
    }
  }
  EXPECT_GT(planted, 500);
  // Some plants are equivalent on these windows (a bound shadowed by another, or beyond
  // every position: j >= i - 57); 508 of 683 are caught today.
  EXPECT_GE(caught * 10, planted * 7) << caught << " of " << planted;
}

// Compiles `expressions` as the bodies of `bool mask_allows(int i, int j)`, as
// templates/sm90a/forward/mask.cu.tmpl does, with the host compiler, and returns each one's
// bits over the windows.
std::vector<std::string> compiled_bits(const std::vector<std::string>& expressions, const std::string& tag) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("kgen_mask_cpp_" + tag);
  std::filesystem::create_directories(dir);
  std::ofstream source(dir / "masks.cc");
  source << "#include <cstdio>\n";
  for (std::size_t k = 0; k < expressions.size(); ++k)
    source << "static bool mask_allows_" << k << "(int i, int j) {\n  (void)i, (void)j;\n  return " << expressions[k] << ";\n}\n";
  source << "static bool (*const kMasks[])(int, int) = {\n";
  for (std::size_t k = 0; k < expressions.size(); ++k) source << "    mask_allows_" << k << ",\n";
  source << "};\nint main() {\n  const int windows[][2] = {";
  for (const auto& w : kWindows) source << "{" << w.q_first << ", " << w.kv_first << "}, ";
  source << "};\n"
            "  for (auto* allows : kMasks) {\n"
            "    for (const auto& w : windows)\n"
            "      for (int i = w[0]; i < w[0] + " << kSide << "; ++i)\n"
            "        for (int j = w[1]; j < w[1] + " << kSide << "; ++j) std::putchar(allows(i, j) ? '1' : '0');\n"
            "    std::putchar('\\n');\n"
            "  }\n}\n";
  source.close();
  const std::string binary = (dir / "masks").string();
  const std::string compile = std::string(KGEN_HOST_CXX) + " -std=c++20 -O0 -Wall -Wextra -Werror -o " + binary + " " +
                              (dir / "masks.cc").string();
  if (std::system(compile.c_str()) != 0) throw std::runtime_error("does not compile: " + compile);
  std::vector<std::string> out;
  FILE* run = popen(binary.c_str(), "r");
  std::string line;
  for (int ch; (ch = std::fgetc(run)) != EOF;) {
    if (ch != '\n') {
      line += static_cast<char>(ch);
      continue;
    }
    out.push_back(line);
    line.clear();
  }
  pclose(run);
  return out;
}

// How many cases the printed text gets wrong somewhere.
int wrong_cases(const std::vector<Case>& cases, const std::function<std::string(const MaskProgram&)>& print,
                const std::string& tag) {
  std::vector<std::string> expressions;
  for (const Case& c : cases) expressions.push_back(print(lower_mask(c.mask, c.kv_len)));
  const std::vector<std::string> bits = compiled_bits(expressions, tag);
  if (bits.size() != cases.size()) throw std::runtime_error("the compiled masks printed too few lines");
  int wrong = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    if (bits[k] == expected_bits(cases[k])) continue;
    if (wrong++ < 3 && tag == "printed") ADD_FAILURE() << cases[k].name() << ": " << expressions[k];
  }
  return wrong;
}

TEST(MaskLowering, CppExpressionCompiledMeansTheMask) {
  const std::vector<Case> cases = mask_cases::cases({1, 17, kSide});
  EXPECT_EQ(wrong_cases(cases, mask_cpp_expression, "printed"), 0);
}

TEST(MaskLowering, CppPlantedLowerBoundOffByOneIsCaught) {
  // The lower-bound printer writing `j > i + c` for `j >= i + c`.
  auto off_by_one = [](const MaskProgram& program) {
    std::string text = mask_cpp_expression(program);
    for (std::size_t at; (at = text.find("j >= ")) != std::string::npos;) text.replace(at, 5, "j > ");
    return text;
  };
  EXPECT_GT(wrong_cases(mask_cases::cases({}), off_by_one, "planted"), 50);
}

TEST(MaskLowering, CppExpressionSpelling) {
  auto text = [](const Mask& mask, std::optional<int64_t> kv_len = std::nullopt) {
    return mask_cpp_expression(lower_mask(mask, kv_len));
  };
  using namespace mask_cases;
  using K = Mask::Kind;
  EXPECT_EQ(text(leaf(K::kFull)), "true");
  EXPECT_EQ(text(leaf(K::kFull), 100), "j < 100");
  EXPECT_EQ(text(causal(0), 100), "(j <= i && j < 100)");
  EXPECT_EQ(text(causal(-3)), "j <= i - 3");
  EXPECT_EQ(text(causal(int64_t{1} << 32)), "j <= i + 1073741824");
  EXPECT_EQ(text(local(4, 2, 1)), "(j >= i - 3 && j <= i + 3)");
  EXPECT_EQ(text(local(std::nullopt, 0, 0)), "j <= i");
  EXPECT_EQ(text(chunked(64)), "(i / 64 == j / 64 && j <= i)");
  EXPECT_EQ(text(prefix(10)), "(j < 10 || j <= i)");
  EXPECT_EQ(text(tree(K::kOr, {causal(0), tree(K::kAnd, {prefix(5), causal(9), leaf(K::kFull)})})),
            "(j <= i || ((j < 5 || j <= i) && j <= i + 9))");
}

}  // namespace
}  // namespace kgen
