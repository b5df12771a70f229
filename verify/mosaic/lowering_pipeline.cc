#include "lowering_pipeline.h"

#include "bufferize_vectors.h"
#include "llvm/Support/raw_ostream.h"
#include "lower_tpu_ops.h"
// Each conversion's own header: the umbrella mlir/Conversion/Passes.h declares every
// conversion MLIR has (OpenMP, XeVM, ...) and tripled this file's compile time.
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mosaic_context.h"
#include "mosaic_error.h"
#include "strip_memory_spaces.h"

namespace kgen::mosaic {
namespace {

// Kernel metadata (window_params, #tpu attributes) means nothing to LLVM and is read
// from the original module; only what the lowering needs stays.
void prepare_functions(mlir::ModuleOp module) {
  mlir::Builder b(module.getContext());
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    llvm::SmallVector<mlir::StringAttr> drop;
    for (mlir::NamedAttribute attr : func->getDiscardableAttrs()) drop.push_back(attr.getName());
    for (mlir::StringAttr name : drop) func->removeAttr(name);
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
    func->setAttr(mlir::LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  }
}

void print_stage(const LoweringOptions& options, const char* stage, mlir::ModuleOp module) {
  if (!options.print_ir) return;
  llvm::errs() << "// ----- after " << stage << " -----\n";
  module.print(llvm::errs());
  llvm::errs() << "\n";
}

void build_llvm_pipeline(mlir::PassManager& pm) {
  mlir::bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(mlir::createConvertBufferizationToMemRefPass());
  // bf16 (and f16) arithmetic in f32, conversions as bit manipulation: no dependence on
  // soft-float helpers the host's libgcc may lack.
  mlir::arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(mlir::arith::createArithEmulateUnsupportedFloats(emulate));
  mlir::arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(mlir::arith::createArithExpandOpsPass(expand));
  // Transcendentals as libm calls: exact to an ulp, where polynomial approximations
  // would add error of their own to what the verifier measures.
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  mlir::ConvertVectorToLLVMPassOptions vector_options;
  vector_options.reassociateFPReductions = true;
  pm.addPass(mlir::createConvertVectorToLLVMPass(vector_options));
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createUBToLLVMConversionPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

}  // namespace

void lower_to_llvm(mlir::ModuleOp module, const LoweringOptions& options) {
  mlir::MLIRContext* context = module.getContext();
  DiagnosticCapture diagnostics(*context);
  auto fail = [&](const char* stage) {
    throw MosaicError(std::string("lowering failed in ") + stage + ":\n" + diagnostics.text());
  };
  strip_tpu_memory_spaces(module);
  prepare_functions(module);
  print_stage(options, "strip-memory-spaces", module);
  if (mlir::failed(lower_tpu_ops(module))) fail("lower-tpu-ops");
  print_stage(options, "lower-tpu-ops", module);
  if (mlir::failed(mlir::verify(module))) fail("lower-tpu-ops (verification)");
  if (mlir::failed(bufferize_vectors(module))) fail("bufferize-vectors");
  print_stage(options, "bufferize-vectors", module);
  if (mlir::failed(mlir::verify(module))) fail("bufferize-vectors (verification)");
  mlir::PassManager pm(context);
  pm.enableVerifier(true);
  build_llvm_pipeline(pm);
  if (options.print_ir) {
    pm.enableIRPrinting([](mlir::Pass*, mlir::Operation*) { return false; },
                        [](mlir::Pass*, mlir::Operation*) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/true);
  }
  if (mlir::failed(pm.run(module))) fail("the LLVM conversion pipeline");
}

}  // namespace kgen::mosaic
