// The MLIR printer's text (generator/mask_printers.h) parsed, lowered and run by MLIR on the
// CPU (verify/mosaic), against Mask::allowed on every position of small windows. Each case
// is one scf.if region, as in the tpu kernel, so the printed names repeat without clashing.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mask_cases.h"
#include "mask_lowering.h"
#include "mask_printers.h"
#include "mosaic_kernel.h"

namespace kgen {
namespace {

using mask_cases::Case;
using mask_cases::kSide;

const std::string kI32 = "vector<40x40xi32>", kI1 = "vector<40x40xi1>";
static_assert(kSide == 40);

// One kernel writing 1/0 for every case's (i, j) to out[case * 40 + row], for the window
// whose first q and kv positions are `%first` (one compilation serves every window).
std::string module_text(const std::vector<MlirMaskOps>& printed) {
  const std::string out_type = "memref<" + std::to_string(printed.size() * kSide) + "x40xi32>";
  std::string text = "func.func @k(%first: memref<2xi32>, %out: " + out_type + ") {\n"
                     "  %c0 = arith.constant 0 : index\n"
                     "  %c1 = arith.constant 1 : index\n"
                     "  %true = arith.constant true\n"
                     "  %one = arith.constant dense<1> : " + kI32 + "\n"
                     "  %zero = arith.constant dense<0> : " + kI32 + "\n"
                     "  %q_first_scalar = memref.load %first[%c0] : memref<2xi32>\n"
                     "  %kv_first_scalar = memref.load %first[%c1] : memref<2xi32>\n"
                     "  %q_first = vector.broadcast %q_first_scalar : i32 to " + kI32 + "\n"
                     "  %kv_first = vector.broadcast %kv_first_scalar : i32 to " + kI32 + "\n"
                     "  %q_iota = tpu.iota {dimensions = array<i32: 0>} : " + kI32 + "\n"
                     "  %kv_iota = tpu.iota {dimensions = array<i32: 1>} : " + kI32 + "\n"
                     "  %q_pos = arith.addi %q_first, %q_iota : " + kI32 + "\n"
                     "  %kv_pos = arith.addi %kv_first, %kv_iota : " + kI32 + "\n";
  for (std::size_t k = 0; k < printed.size(); ++k) {
    const std::string n = std::to_string(k);
    std::string ops;
    for (std::size_t at = 0; at < printed[k].ops.size();) {
      const std::size_t end = printed[k].ops.find('\n', at);
      ops += "    " + printed[k].ops.substr(at, end - at) + "\n";
      at = end == std::string::npos ? printed[k].ops.size() : end + 1;
    }
    text += "  %keep_" + n + " = scf.if %true -> (" + kI1 + ") {\n" + ops +
            "    %keep_static = " + printed[k].result + "\n"
            "    scf.yield %keep_static : " + kI1 + "\n"
            "  } else {\n"
            "    %none = arith.constant dense<false> : " + kI1 + "\n"
            "    scf.yield %none : " + kI1 + "\n"
            "  }\n"
            "  %bits_" + n + " = arith.select %keep_" + n + ", %one, %zero : " + kI1 + ", " + kI32 + "\n"
            "  %row_" + n + " = arith.constant " + std::to_string(k * kSide) + " : index\n"
            "  tpu.vector_store %out[%row_" + n + ", %c0], %bits_" + n + " {strides = array<i32>} : " + out_type +
            ", " + kI32 + ",\n";
  }
  return text + "  return\n}\n";
}

// How many cases the MLIR text of `print` gets wrong on some position of some window.
int wrong_cases(const std::vector<Case>& cases, const std::function<MlirMaskOps(const MaskProgram&)>& print) {
  std::vector<MlirMaskOps> printed;
  for (const Case& c : cases) printed.push_back(print(lower_mask(c.mask, c.kv_len)));
  std::vector<bool> wrong(cases.size());
  const mosaic::MosaicKernel kernel(module_text(printed), {"mask_cases.mlir", 0, false});
  for (const auto& w : mask_cases::kWindows) {
    mosaic::HostArray first({2}, mosaic::DType::kI32);
    const int32_t positions[2] = {static_cast<int32_t>(w.q_first), static_cast<int32_t>(w.kv_first)};
    std::memcpy(first.bytes.data(), positions, sizeof positions);
    mosaic::HostArray out({static_cast<int64_t>(cases.size()) * kSide, kSide}, mosaic::DType::kI32);
    kernel.run_step({}, {}, {first.view(), out.view()});
    std::vector<int32_t> bits(out.bytes.size() / 4);
    std::memcpy(bits.data(), out.bytes.data(), out.bytes.size());
    for (std::size_t k = 0; k < cases.size(); ++k)
      for (int64_t r = 0; r < kSide; ++r)
        for (int64_t col = 0; col < kSide; ++col) {
          const bool kept = bits[(k * kSide + r) * kSide + col] != 0;
          if (kept != cases[k].allowed(w.q_first + r, w.kv_first + col)) wrong[k] = true;
        }
  }
  int count = 0;
  for (bool x : wrong) count += x;
  return count;
}

MlirMaskOps printed(const MaskProgram& program) { return mask_mlir_ops(program, kI32, kI1); }

TEST(MaskMlir, OpsRunByMlirMeanTheMask) {
  // One kv tail: the MLIR compile time grows with the cases (the tpu kernel has no tail).
  const std::vector<Case> cases = mask_cases::cases({17});
  EXPECT_EQ(wrong_cases(cases, printed), 0);
  std::printf("%zu cases x %zu positions\n", cases.size(), mask_cases::kWindows.size() * kSide * kSide);
}

TEST(MaskMlir, PlantedLowerBoundOffByOneIsCaught) {
  // The lower-bound printer comparing sgt for j >= i + c.
  auto off_by_one = [](const MaskProgram& program) {
    MlirMaskOps ops = printed(program);
    for (std::string* text : {&ops.ops, &ops.result})
      for (std::size_t at; (at = text->find("cmpi sge")) != std::string::npos;) text->replace(at, 8, "cmpi sgt");
    return ops;
  };
  EXPECT_GT(wrong_cases(mask_cases::cases({}), off_by_one), 50);
}

TEST(MaskMlir, OpsSpelling) {
  using namespace mask_cases;
  const MlirMaskOps local_window = mask_mlir_ops(lower_mask(local(100, 0, 5)), "vector<8xi32>", "vector<8xi1>");
  EXPECT_EQ(local_window.ops,
            "%mask_0_c = arith.constant dense<-95> : vector<8xi32>\n"
            "%mask_0_bound = arith.addi %q_pos, %mask_0_c : vector<8xi32>\n"
            "%mask_0 = arith.cmpi sge, %kv_pos, %mask_0_bound : vector<8xi32>\n"
            "%mask_1_c = arith.constant dense<5> : vector<8xi32>\n"
            "%mask_1_bound = arith.addi %q_pos, %mask_1_c : vector<8xi32>\n"
            "%mask_1 = arith.cmpi sle, %kv_pos, %mask_1_bound : vector<8xi32>");
  EXPECT_EQ(local_window.result, "arith.andi %mask_0, %mask_1 : vector<8xi1>");
  const MlirMaskOps causal_only = mask_mlir_ops(lower_mask(causal(0)), "vector<8xi32>", "vector<8xi1>");
  EXPECT_EQ(causal_only.ops, "");
  EXPECT_EQ(causal_only.result, "arith.cmpi sle, %kv_pos, %q_pos : vector<8xi32>");
}

}  // namespace
}  // namespace kgen
