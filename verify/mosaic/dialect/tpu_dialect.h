// The minimal `tpu` dialect (see TpuBase.td): enough of Mosaic's dialect to parse,
// verify and lower the kernels Pallas and kgen emit.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

// The generated declarations depend on each other in this order.
// clang-format off
#include "dialect/TpuEnums.h.inc"
#include "dialect/TpuDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/TpuAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialect/TpuTypes.h.inc"
#define GET_OP_CLASSES
#include "dialect/TpuOps.h.inc"
// clang-format on
