// A lowered mask (mask_lowering.h) printed for a kernel: as one C++ boolean expression for
// the sm90a kernel, as MLIR arith ops for the tpu kernel. Printing decides nothing: every
// constant and every operation is the program's, so tests of the program and of the text's
// meaning (tests/mask_lowering) cover both targets.
#pragma once

#include <string>

#include "mask_lowering.h"

namespace kgen {

// A C++ expression of `int i` (query) and `int j` (key): "(j >= i - 3 && j <= i + 4)".
std::string mask_cpp_expression(const MaskProgram& program);

// The program as MLIR over the vectors %q_pos<suffix> and %kv_pos<suffix> (of `i32_type`,
// one position per element), for the template to bind: `ops` defines the intermediate
// values, all named %mask_<node>...<suffix>, one per line; `result` is the right-hand side
// of the last op, whose result of `i1_type` the template names. The suffix keeps the names
// of several unrolled copies apart. `ops` is empty only for a kTrue program.
struct MlirMaskOps {
  std::string ops;
  std::string result;
};
MlirMaskOps mask_mlir_ops(const MaskProgram& program, const std::string& i32_type, const std::string& i1_type,
                          const std::string& suffix = "");

}  // namespace kgen
