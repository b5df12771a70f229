// Instantiates the generated dialect, attribute and op classes.
#include "dialect/tpu_dialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

// clang-format off
#include "dialect/TpuEnums.cpp.inc"
#include "dialect/TpuDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/TpuAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialect/TpuTypes.cpp.inc"
#define GET_OP_CLASSES
#include "dialect/TpuOps.cpp.inc"
// clang-format on

namespace kgen::tpu {

void TPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/TpuAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/TpuTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/TpuOps.cpp.inc"
      >();
}

}  // namespace kgen::tpu
