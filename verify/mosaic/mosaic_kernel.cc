#include "mosaic_kernel.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "dma_runtime.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "lowering_pipeline.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mosaic_context.h"
#include "mosaic_error.h"

namespace kgen::mosaic {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void initialize_llvm_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// The C view of a rank-N memref that `_mlir_ciface_` functions take a pointer to:
// {allocated, aligned, offset, sizes[N], strides[N]}, all 8 bytes wide.
std::vector<int64_t> descriptor(const BufferView& view) {
  size_t rank = view.shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  int64_t address = static_cast<int64_t>(reinterpret_cast<intptr_t>(view.data));
  d[0] = address;
  d[1] = address;
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = view.shape[i];
    d[3 + rank + i] = stride;
    stride *= view.shape[i];
  }
  return d;
}

void check_view(const BufferView& view, const OperandInfo& operand, const std::string& what) {
  if (view.shape != operand.shape || view.dtype != operand.dtype) {
    std::ostringstream os;
    os << what << ": expected " << dtype_name(operand.dtype) << "[";
    for (size_t i = 0; i < operand.shape.size(); ++i) os << (i ? "," : "") << operand.shape[i];
    os << "], got " << dtype_name(view.dtype) << "[";
    for (size_t i = 0; i < view.shape.size(); ++i) os << (i ? "," : "") << view.shape[i];
    os << "]";
    throw MosaicError(os.str());
  }
  if (!view.data && view.num_elements() > 0) throw MosaicError(what + ": null data");
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MosaicError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

KernelSignature read_signature(std::string_view module_text, const std::string& source_name) {
  std::unique_ptr<mlir::MLIRContext> context = make_mosaic_context();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parse_mosaic_module(*context, module_text, source_name);
  return read_kernel_signature(*module);
}

struct MosaicKernel::Impl {
  std::unique_ptr<mlir::MLIRContext> context;
  KernelSignature signature;
  CompileTimes times;
  std::unique_ptr<mlir::ExecutionEngine> engine;

  // Packs the arguments as `_mlir__mlir_ciface_<name>` expects: one pointer per argument
  // (to the i32, or to a pointer to the memref descriptor). `results` receives the
  // func's `num_results` i32 results: a single result comes back through a pointer after
  // the arguments, several through a pointer to their struct in front of them.
  void call(const std::string& name, const std::vector<int64_t>& grid_index,
            const std::vector<const BufferView*>& memrefs, int32_t* results,
            size_t num_results) const {
    if (grid_index.size() != signature.iteration_bounds.size()) {
      throw MosaicError("grid index has " + std::to_string(grid_index.size()) +
                        " dims, the grid has " + std::to_string(signature.iteration_bounds.size()));
    }
    std::vector<int32_t> indices(grid_index.begin(), grid_index.end());
    std::vector<std::vector<int64_t>> descriptors;
    descriptors.reserve(memrefs.size());
    std::vector<void*> descriptor_pointers(memrefs.size());
    std::vector<void*> args;
    void* struct_pointer = results;
    if (num_results > 1) args.push_back(&struct_pointer);
    for (int32_t& index : indices) args.push_back(&index);
    for (size_t i = 0; i < memrefs.size(); ++i) {
      descriptors.push_back(descriptor(*memrefs[i]));
      descriptor_pointers[i] = descriptors.back().data();
      args.push_back(&descriptor_pointers[i]);
    }
    if (num_results == 1) args.push_back(results);
    if (llvm::Error error = engine->invokePacked("_mlir_ciface_" + name, args)) {
      throw MosaicError("calling @" + name + ": " + llvm::toString(std::move(error)));
    }
  }
};

MosaicKernel::MosaicKernel(std::string_view module_text, const CompileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  initialize_llvm_once();
  impl_->context = make_mosaic_context();
  auto start = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parse_mosaic_module(*impl_->context, module_text, options.source_name);
  impl_->signature = read_kernel_signature(*module);
  impl_->times.parse_seconds = seconds_since(start);

  start = std::chrono::steady_clock::now();
  LoweringOptions lowering;
  lowering.print_ir = options.print_ir;
  lower_to_llvm(*module, lowering);
  impl_->times.lower_seconds = seconds_since(start);

  start = std::chrono::steady_clock::now();
  DiagnosticCapture diagnostics(*impl_->context);
  mlir::ExecutionEngineOptions engine_options;
  auto transformer = mlir::makeOptimizingTransformer(options.llvm_opt_level, 0, nullptr);
  engine_options.transformer = transformer;
  engine_options.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(options.llvm_opt_level);
  engine_options.enableGDBNotificationListener = false;
  engine_options.enablePerfNotificationListener = false;
  auto engine = mlir::ExecutionEngine::create(*module, engine_options);
  if (!engine) {
    throw MosaicError("JIT compilation failed: " + llvm::toString(engine.takeError()) + "\n" +
                      diagnostics.text());
  }
  impl_->engine = std::move(*engine);
  // The host side of the kernel's DMAs (dma_runtime.h), which the lowering calls by name.
  impl_->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("kgen_mosaic_dma_start")] = {llvm::orc::ExecutorAddr::fromPtr(&kgen_mosaic_dma_start),
                                                  llvm::JITSymbolFlags::Exported};
    symbols[interner("kgen_mosaic_dma_wait")] = {llvm::orc::ExecutorAddr::fromPtr(&kgen_mosaic_dma_wait),
                                                 llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // The JIT compiles lazily, on first lookup: look everything up now so that the cost
  // is paid (and measured) here and a codegen failure surfaces from the constructor.
  std::vector<std::string> names = {impl_->signature.name};
  for (const WindowParam& param : impl_->signature.window_params) {
    if (!param.transform.empty()) names.push_back(param.transform);
  }
  for (const std::string& name : names) {
    auto function = impl_->engine->lookupPacked("_mlir_ciface_" + name);
    if (!function) {
      throw MosaicError("JIT compilation of @" + name + " failed: " +
                        llvm::toString(function.takeError()) + "\n" + diagnostics.text());
    }
  }
  impl_->times.jit_seconds = seconds_since(start);
}

MosaicKernel MosaicKernel::from_file(const std::string& path, CompileOptions options) {
  if (options.source_name == CompileOptions{}.source_name) options.source_name = path;
  return MosaicKernel(read_text_file(path), options);
}

MosaicKernel::~MosaicKernel() = default;
MosaicKernel::MosaicKernel(MosaicKernel&&) noexcept = default;
MosaicKernel& MosaicKernel::operator=(MosaicKernel&&) noexcept = default;

const KernelSignature& MosaicKernel::signature() const { return impl_->signature; }
const CompileTimes& MosaicKernel::compile_times() const { return impl_->times; }

HostArray MosaicKernel::make_prefetch(size_t i, const std::vector<int32_t>& values) const {
  const KernelSignature& sig = impl_->signature;
  if (i >= static_cast<size_t>(sig.scalar_prefetch)) {
    throw MosaicError("no scalar prefetch operand " + std::to_string(i));
  }
  const OperandInfo& operand = sig.prefetch_operand(i);
  HostArray array(operand.shape, operand.dtype);
  if (static_cast<int64_t>(values.size()) != array.view().num_elements()) {
    throw MosaicError("scalar prefetch " + std::to_string(i) + " needs " +
                      std::to_string(array.view().num_elements()) + " values, got " +
                      std::to_string(values.size()));
  }
  for (size_t e = 0; e < values.size(); ++e) {
    std::byte* at = array.bytes.data() + e * dtype_size(operand.dtype);
    int64_t v = values[e];
    switch (operand.dtype) {
      case DType::kI64:
        std::memcpy(at, &v, 8);
        break;
      case DType::kI32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(at, &x, 4);
        break;
      }
      case DType::kI16: {
        int16_t x = static_cast<int16_t>(v);
        std::memcpy(at, &x, 2);
        break;
      }
      case DType::kI8:
      case DType::kI1: {
        int8_t x = static_cast<int8_t>(v);
        std::memcpy(at, &x, 1);
        break;
      }
      default:
        throw MosaicError("scalar prefetch " + std::to_string(i) + " is not an integer array");
    }
  }
  return array;
}

std::vector<int64_t> MosaicKernel::block_indices(size_t window,
                                                 const std::vector<int64_t>& grid_index,
                                                 const std::vector<BufferView>& prefetch) const {
  const KernelSignature& sig = impl_->signature;
  if (window >= sig.window_params.size()) {
    throw MosaicError("no window " + std::to_string(window));
  }
  const WindowParam& param = sig.window_params[window];
  size_t rank = sig.window_operand(window).shape.size();
  if (param.transform.empty()) return std::vector<int64_t>(rank, 0);
  if (prefetch.size() != static_cast<size_t>(sig.scalar_prefetch)) {
    throw MosaicError("expected " + std::to_string(sig.scalar_prefetch) +
                      " scalar prefetch arrays, got " + std::to_string(prefetch.size()));
  }
  std::vector<const BufferView*> memrefs;
  for (size_t i = 0; i < prefetch.size(); ++i) {
    check_view(prefetch[i], sig.prefetch_operand(i), "scalar prefetch " + std::to_string(i));
    memrefs.push_back(&prefetch[i]);
  }
  std::vector<int32_t> results(rank);
  impl_->call(param.transform, grid_index, memrefs, results.data(), rank);
  return std::vector<int64_t>(results.begin(), results.end());
}

void MosaicKernel::run_step(const std::vector<int64_t>& grid_index,
                            const std::vector<BufferView>& prefetch,
                            const std::vector<BufferView>& blocks) const {
  const KernelSignature& sig = impl_->signature;
  size_t expected = sig.operands.size() - sig.scalar_prefetch;
  if (prefetch.size() != static_cast<size_t>(sig.scalar_prefetch) || blocks.size() != expected) {
    throw MosaicError("run_step expects " + std::to_string(sig.scalar_prefetch) +
                      " prefetch arrays and " + std::to_string(expected) + " blocks, got " +
                      std::to_string(prefetch.size()) + " and " + std::to_string(blocks.size()));
  }
  std::vector<const BufferView*> memrefs;
  for (size_t i = 0; i < prefetch.size(); ++i) {
    check_view(prefetch[i], sig.operands[i], "scalar prefetch " + std::to_string(i));
    memrefs.push_back(&prefetch[i]);
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    check_view(blocks[i], sig.operands[sig.scalar_prefetch + i],
               "block operand " + std::to_string(i));
    memrefs.push_back(&blocks[i]);
  }
  impl_->call(sig.name, grid_index, memrefs, nullptr, 0);
  if (std::string error = dma_trace().take_error(); !error.empty()) {
    std::string at;
    for (int64_t i : grid_index) at += (at.empty() ? "" : ", ") + std::to_string(i);
    throw MosaicError("grid step (" + at + "): " + error);
  }
}

}  // namespace kgen::mosaic
