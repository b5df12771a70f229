#include "kernel_signature.h"

#include <sstream>

#include "dialect/tpu_dialect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mosaic_error.h"

namespace kgen::mosaic {
namespace {

std::string type_name(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

OperandInfo operand_info(mlir::func::FuncOp func, unsigned index) {
  auto memref = llvm::dyn_cast<mlir::MemRefType>(func.getArgument(index).getType());
  if (!memref || !memref.hasStaticShape()) {
    throw MosaicError(
        "kernel argument " + std::to_string(index) +
        " is not a statically shaped memref: " + type_name(func.getArgument(index).getType()));
  }
  OperandInfo info;
  info.shape.assign(memref.getShape().begin(), memref.getShape().end());
  // A DMA semaphore is i32 storage on the CPU (dma_runtime.h counts bytes in it).
  info.dtype = llvm::isa<tpu::DMASemaphoreType>(memref.getElementType())
                   ? DType::kI32
                   : dtype_from_name(type_name(memref.getElementType()));
  if (auto space = llvm::dyn_cast_or_null<tpu::MemorySpaceAttr>(memref.getMemorySpace())) {
    info.memory_space = tpu::stringifyMemorySpace(space.getValue()).str();
  }
  return info;
}

std::vector<int64_t> i64_array(mlir::Attribute attr, const std::string& what) {
  auto array = llvm::dyn_cast_or_null<mlir::DenseI64ArrayAttr>(attr);
  if (!array) throw MosaicError(what + " is not an array<i64: ...>");
  return std::vector<int64_t>(array.asArrayRef().begin(), array.asArrayRef().end());
}

int64_t i64_value(mlir::Attribute attr) {
  auto integer = llvm::dyn_cast_or_null<mlir::IntegerAttr>(attr);
  return integer ? integer.getInt() : 0;
}

// The kernel is the func carrying Mosaic's grid attributes; a module without them (a
// hand-written test kernel without a grid) falls back to the first non-transform func.
mlir::func::FuncOp find_kernel(mlir::ModuleOp module) {
  mlir::func::FuncOp fallback;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (func->hasAttr("window_params") || func->hasAttr("iteration_bounds")) return func;
    if (!fallback && !func.getSymName().starts_with("transform_")) fallback = func;
  }
  if (!fallback) throw MosaicError("module has no kernel func");
  return fallback;
}

void check_transform(mlir::ModuleOp module, const KernelSignature& sig, size_t window) {
  const WindowParam& param = sig.window_params[window];
  auto func = module.lookupSymbol<mlir::func::FuncOp>(param.transform);
  std::string where = "window " + std::to_string(window) + " (@" + param.transform + ")";
  if (!func) throw MosaicError(where + ": transform func not found");
  mlir::FunctionType type = func.getFunctionType();
  size_t grid = sig.iteration_bounds.size();
  if (type.getNumInputs() != grid + sig.scalar_prefetch) {
    throw MosaicError(where + ": takes " + std::to_string(type.getNumInputs()) +
                      " arguments, expected grid indices and scalar prefetch refs (" +
                      std::to_string(grid + sig.scalar_prefetch) + ")");
  }
  for (size_t i = 0; i < grid; ++i) {
    if (!type.getInput(i).isInteger(32)) throw MosaicError(where + ": grid index is not i32");
  }
  const OperandInfo& operand = sig.window_operand(window);
  if (type.getNumResults() != operand.shape.size() ||
      !llvm::all_of(type.getResults(), [](mlir::Type t) { return t.isInteger(32); })) {
    throw MosaicError(where + ": must return one i32 block index per operand dim (" +
                      std::to_string(operand.shape.size()) + ")");
  }
}

}  // namespace

KernelSignature read_kernel_signature(mlir::ModuleOp module) {
  mlir::func::FuncOp kernel = find_kernel(module);
  KernelSignature sig;
  sig.name = kernel.getSymName().str();
  if (mlir::Attribute bounds = kernel->getAttr("iteration_bounds")) {
    sig.iteration_bounds = i64_array(bounds, "iteration_bounds");
  }
  if (auto semantics = kernel->getAttrOfType<mlir::ArrayAttr>("dimension_semantics")) {
    for (mlir::Attribute attr : semantics) {
      auto sem = llvm::dyn_cast<tpu::DimensionSemanticsAttr>(attr);
      if (!sem) throw MosaicError("dimension_semantics holds a non-#tpu.dimension_semantics");
      sig.dimension_semantics.push_back(tpu::stringifyDimensionSemantics(sem.getValue()).str());
    }
  }
  if (auto core = kernel->getAttrOfType<tpu::CoreTypeAttr>("tpu.core_type")) {
    sig.core_type = tpu::stringifyCoreType(core.getValue()).str();
  }
  sig.scalar_prefetch = i64_value(kernel->getAttr("scalar_prefetch"));
  sig.scratch_operands = i64_value(kernel->getAttr("scratch_operands"));
  if (auto params = kernel->getAttrOfType<mlir::ArrayAttr>("window_params")) {
    for (mlir::Attribute attr : params) {
      auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(attr);
      if (!dict) throw MosaicError("window_params holds a non-dictionary");
      WindowParam param;
      if (auto sym = dict.getAs<mlir::FlatSymbolRefAttr>("transform_indices")) {
        param.transform = sym.getValue().str();
      }
      if (mlir::Attribute bounds = dict.get("window_bounds")) {
        param.window_bounds = i64_array(bounds, "window_bounds");
      }
      if (auto mode = dict.getAs<tpu::PipelineModeAttr>("pipeline_mode")) {
        param.pipeline_mode = tpu::stringifyPipelineMode(mode.getValue()).str();
      }
      sig.window_params.push_back(param);
    }
  }

  size_t grid = sig.iteration_bounds.size();
  size_t expected = grid + sig.scalar_prefetch + sig.window_params.size() + sig.scratch_operands;
  // A kernel without Mosaic's attributes (a hand-written test) takes only its memrefs.
  bool has_mosaic_attrs = kernel->hasAttr("window_params") || kernel->hasAttr("scalar_prefetch") ||
                          kernel->hasAttr("scratch_operands");
  if (has_mosaic_attrs && kernel.getNumArguments() != expected) {
    throw MosaicError("@" + sig.name + " takes " + std::to_string(kernel.getNumArguments()) +
                      " arguments; its attributes account for " + std::to_string(expected) +
                      " (grid " + std::to_string(grid) + ", scalar prefetch " +
                      std::to_string(sig.scalar_prefetch) + ", windows " +
                      std::to_string(sig.window_params.size()) + ", scratch " +
                      std::to_string(sig.scratch_operands) + ")");
  }
  for (size_t i = 0; i < grid; ++i) {
    if (!kernel.getArgument(i).getType().isInteger(32)) {
      throw MosaicError("@" + sig.name + " argument " + std::to_string(i) +
                        " is a grid index and must be i32");
    }
  }
  for (unsigned i = grid; i < kernel.getNumArguments(); ++i) {
    sig.operands.push_back(operand_info(kernel, i));
  }
  for (size_t k = 0; k < sig.window_params.size(); ++k) {
    WindowParam& param = sig.window_params[k];
    const OperandInfo& operand = sig.window_operand(k);
    if (param.window_bounds.empty()) param.window_bounds = operand.shape;
    if (element_count(param.window_bounds) != element_count(operand.shape)) {
      throw MosaicError("window " + std::to_string(k) + ": window_bounds do not match the " +
                        "kernel's block shape");
    }
    if (!param.transform.empty()) check_transform(module, sig, k);
  }
  return sig;
}

std::string describe(const KernelSignature& sig) {
  std::ostringstream os;
  auto list = [&](const std::vector<int64_t>& v) {
    os << "(";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << ")";
  };
  os << "kernel @" << sig.name << "\n  grid ";
  list(sig.iteration_bounds);
  os << "  semantics (";
  for (size_t i = 0; i < sig.dimension_semantics.size(); ++i) {
    os << (i ? ", " : "") << sig.dimension_semantics[i];
  }
  os << ")";
  if (!sig.core_type.empty()) os << "  core " << sig.core_type;
  os << "\n";
  auto operand = [&](const OperandInfo& info) {
    os << dtype_name(info.dtype);
    list(info.shape);
    if (!info.memory_space.empty()) os << " in " << info.memory_space;
  };
  for (int64_t i = 0; i < sig.scalar_prefetch; ++i) {
    os << "  prefetch " << i << ": ";
    operand(sig.prefetch_operand(i));
    os << "\n";
  }
  for (size_t k = 0; k < sig.window_params.size(); ++k) {
    const WindowParam& p = sig.window_params[k];
    os << "  window " << k << ": ";
    operand(sig.window_operand(k));
    os << " block ";
    list(p.window_bounds);
    os << " index @" << (p.transform.empty() ? "(none)" : p.transform);
    if (!p.pipeline_mode.empty()) os << " " << p.pipeline_mode;
    os << "\n";
  }
  for (int64_t i = 0; i < sig.scratch_operands; ++i) {
    os << "  scratch " << i << ": ";
    operand(sig.scratch_operand(i));
    os << "\n";
  }
  return os.str();
}

}  // namespace kgen::mosaic
