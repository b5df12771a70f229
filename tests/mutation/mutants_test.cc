// The mutant operators of verify/mosaic/mutants.h on a small module: every operator finds
// its sites, in walk order, and applying a mutant changes that op and nothing else.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mosaic_error.h"
#include "mutants.h"

namespace kgen::mosaic {
namespace {

const char kModule[] = R"(module {
  func.func @kernel(%a: f32, %b: f32, %i: i32) -> (f32, vector<8xi32>, i1) {
    %c5 = arith.constant 5 : i32
    %splat = arith.constant dense<-3> : vector<8xi32>
    %yes = arith.constant true
    %sum = arith.addf %a, %b : f32
    %capped = math.tanh %sum : f32
    %ge = arith.cmpi sge, %i, %c5 : i32
    %pick = arith.select %ge, %a, %capped : f32
    %both = arith.andi %ge, %yes : i1
    return %pick, %splat, %both : f32, vector<8xi32>, i1
  }
  func.func @transform_0(%x: i32) -> (i32, i32) {
    %c0 = arith.constant 0 : i32
    return %x, %c0 : i32, i32
  }
}
)";

std::vector<std::string> edits(const std::vector<Mutant>& mutants) {
  std::vector<std::string> out;
  for (const Mutant& m : mutants) out.push_back(std::to_string(m.line) + ": " + m.edit);
  return out;
}

TEST(Mutants, EveryOperatorFindsItsSitesInWalkOrder) {
  const std::vector<std::string> expected = {
      "3: constant 5 -> 6",           "3: constant 5 -> 4",       "4: constant -3 -> -2",
      "4: constant -3 -> -4",         "5: constant 1 -> 0",       "6: arith.addf -> arith.subf",
      "7: math.tanh -> math.sin",     "8: cmpi sge -> sgt",       "9: select values exchanged",
      "10: arith.andi -> arith.ori",  "14: constant 0 -> 1",      "14: constant 0 -> -1",
      "15: index map result 0 +1",    "15: index map result 0 -1", "15: index map result 1 +1",
      "15: index map result 1 -1"};
  EXPECT_EQ(edits(enumerate_mutants(kModule, "m.mlir")), expected);
}

const Mutant& find(const std::vector<Mutant>& mutants, const std::string& edit) {
  for (const Mutant& m : mutants)
    if (m.edit == edit) return m;
  throw std::runtime_error("no mutant " + edit);
}

// The mutated module parses again and shows the edit.
void expect_edit(const std::string& edit, const std::string& present, const std::string& absent) {
  const std::vector<Mutant> original = enumerate_mutants(kModule, "m.mlir");
  const std::string text = apply_mutant(kModule, "m.mlir", find(original, edit));
  EXPECT_NE(text.find(present), std::string::npos) << edit << ":\n" << text;
  if (!absent.empty()) {
    EXPECT_EQ(text.find(absent), std::string::npos) << edit << ":\n" << text;
  }
  EXPECT_NO_THROW(enumerate_mutants(text, "mutant.mlir")) << edit << ": the mutant does not parse back";
}

TEST(Mutants, ApplyingOneChangesThatOpOnly) {
  expect_edit("arith.addf -> arith.subf", "\"arith.subf\"", "\"arith.addf\"");
  expect_edit("math.tanh -> math.sin", "\"math.sin\"", "\"math.tanh\"");
  expect_edit("cmpi sge -> sgt", "predicate = 4", "predicate = 5");
  expect_edit("constant 5 -> 6", "6 : i32", "5 : i32");
  expect_edit("constant -3 -> -4", "dense<-4>", "dense<-3>");
  expect_edit("select values exchanged", "\"arith.select\"(%6, %5, %arg1)", "");
  expect_edit("index map result 1 -1", "\"arith.addi\"", "");
}

TEST(Mutants, ANonexistentMutantIsAnError) {
  EXPECT_THROW(apply_mutant(kModule, "m.mlir", Mutant{.op_ordinal = 0, .variant = 0, .line = 1, .edit = "none"}), MosaicError);
  EXPECT_THROW(apply_mutant(kModule, "m.mlir", Mutant{.op_ordinal = 3, .variant = 5, .line = 4, .edit = "none"}), MosaicError);
  EXPECT_THROW(enumerate_mutants("module { func.func @f( }", "bad.mlir"), MosaicError);
}

}  // namespace
}  // namespace kgen::mosaic
