// kgen_mosaic_cpu: the XLA FFI handler that runs a generated tpu kernel on the CPU, so that
// `kgen.jax.load(...)` computes on a machine without a TPU with the same Mosaic MLIR the
// TPU runs. The call's operands are the tpu_custom_call's (scalar-prefetch tables, then the
// kernel's inputs), its results the kernel's outputs; kgen's executor (verify/mosaic)
// lowers the module to LLVM, JIT-compiles it once per kernel and process, and walks the
// whole grid with Mosaic's pipeline semantics (run_grid), one thread per core over the
// grid's parallel dimensions.
//
// Attributes: `kernel`, the .mlir file's path, and `sha256`, the hash of the text the
// caller traced against. The text is read and compiled on the first call; a file that
// changed since the function was traced is an error, never silently another kernel.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include "grid_driver.h"
#include "mosaic_error.h"
#include "mosaic_kernel.h"
#include "xla/ffi/api/ffi.h"

namespace {

namespace ffi = xla::ffi;
namespace mosaic = kgen::mosaic;

// -O0: the unrolled kernels JIT 3-4 times faster than at -O2 and run about as fast
// (verify/tpu_verifier.h measured it); results are the same at every level.
constexpr int kLlvmOptLevel = 0;

struct CachedKernel {
  std::once_flag compiled;
  std::unique_ptr<mosaic::MosaicKernel> kernel;
  std::string error;  // why it did not compile; then every call reports it
};

// One compiled kernel per (path, sha256) for the life of the process. Entries are never
// removed, so a reference stays valid after the map's lock is released; each entry compiles
// once, and two kernels can compile at the same time. The map is deliberately never
// destroyed: at exit, ~ExecutionEngine runs the JIT's deinitializers through LLVM code whose
// own statics may already be gone (it crashed so, intermittently, in Python's exit).
CachedKernel& cache_entry(std::string_view path, std::string_view sha256) {
  static std::mutex mutex;
  static auto& entries = *new std::map<std::string, std::unique_ptr<CachedKernel>>();
  const std::string key = std::string(path) + '\n' + std::string(sha256);
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<CachedKernel>& entry = entries[key];
  if (!entry) entry = std::make_unique<CachedKernel>();
  return *entry;
}

const mosaic::MosaicKernel& compiled_kernel(std::string_view path, std::string_view sha256) {
  CachedKernel& entry = cache_entry(path, sha256);
  std::call_once(entry.compiled, [&] {
    try {
      const std::string text = mosaic::read_text_file(std::string(path));
      const std::string found = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)), true);
      if (found != sha256) {
        entry.error = std::string(path) + " changed after this function was traced (sha256 " + found +
                      ", traced with " + std::string(sha256) + "): load it again with kgen.jax.load";
        return;
      }
      mosaic::CompileOptions options;
      options.source_name = std::string(path);
      options.llvm_opt_level = kLlvmOptLevel;
      entry.kernel = std::make_unique<mosaic::MosaicKernel>(text, options);
    } catch (const std::exception& e) {
      entry.error = e.what();
    }
  });
  if (!entry.kernel) throw mosaic::MosaicError(entry.error);
  return *entry.kernel;
}

mosaic::DType executor_dtype(ffi::DataType type) {
  switch (type) {
    case ffi::DataType::F32: return mosaic::DType::kF32;
    case ffi::DataType::F64: return mosaic::DType::kF64;
    case ffi::DataType::BF16: return mosaic::DType::kBF16;
    case ffi::DataType::F16: return mosaic::DType::kF16;
    case ffi::DataType::S64: return mosaic::DType::kI64;
    case ffi::DataType::S32: return mosaic::DType::kI32;
    case ffi::DataType::S16: return mosaic::DType::kI16;
    case ffi::DataType::S8: return mosaic::DType::kI8;
    default: throw mosaic::MosaicError("kgen_mosaic_cpu: an operand's element type has no executor type");
  }
}

mosaic::BufferView view_of(const ffi::AnyBuffer& buffer) {
  const auto dims = buffer.dimensions();
  return mosaic::BufferView{buffer.untyped_data(), std::vector<int64_t>(dims.begin(), dims.end()),
                            executor_dtype(buffer.element_type())};
}

std::vector<int32_t> prefetch_values(const ffi::AnyBuffer& buffer, size_t index) {
  if (buffer.element_type() != ffi::DataType::S32)
    throw mosaic::MosaicError("kgen_mosaic_cpu: scalar-prefetch operand " + std::to_string(index) +
                              " is not int32 (the tables of <name>.tpu*.plan.json are)");
  const int32_t* data = buffer.typed_data<int32_t>();
  return std::vector<int32_t>(data, data + buffer.element_count());
}

// The whole grid, its "parallel" dimensions spread over threads. Mosaic lets a TPU split
// those dimensions across cores (megacore), so no output block and no scratch value is shared
// between two of their indices: each thread walks the steps of its own indices of the leading
// parallel dimensions, with run_grid's residency semantics and scratch of its own, and writes
// disjoint output blocks. The kernels here lead with (batch, heads) or (batch, kv blocks).
void run_parallel_grid(const mosaic::MosaicKernel& kernel, const std::vector<std::vector<int32_t>>& prefetch,
                       const std::vector<mosaic::WindowArray>& windows) {
  const mosaic::KernelSignature& signature = kernel.signature();
  size_t parallel_dims = 0;
  int64_t partitions = 1;
  while (parallel_dims < signature.dimension_semantics.size() &&
         signature.dimension_semantics[parallel_dims] == "parallel")
    partitions *= signature.iteration_bounds[parallel_dims++];
  const int64_t threads = std::min<int64_t>(partitions, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    mosaic::run_grid(kernel, prefetch, windows);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int64_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      try {
        mosaic::GridOptions options;
        options.sample = [&](const std::vector<int64_t>& step) {
          int64_t partition = 0;
          for (size_t d = 0; d < parallel_dims; ++d) partition = partition * signature.iteration_bounds[d] + step[d];
          return partition % threads == t;
        };
        mosaic::run_grid(kernel, prefetch, windows, options);
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    });
  for (std::thread& worker : workers) worker.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

void run_kernel(const ffi::RemainingArgs& args, const ffi::RemainingRets& rets, std::string_view path,
                std::string_view sha256) {
  const mosaic::MosaicKernel& kernel = compiled_kernel(path, sha256);
  const mosaic::KernelSignature& signature = kernel.signature();
  const size_t prefetch_count = static_cast<size_t>(signature.scalar_prefetch);
  if (args.size() < prefetch_count || args.size() - prefetch_count + rets.size() != signature.num_windows())
    throw mosaic::MosaicError("kgen_mosaic_cpu: " + std::string(path) + " takes " + std::to_string(prefetch_count) +
                              " scalar-prefetch operands and " + std::to_string(signature.num_windows()) +
                              " windowed inputs and outputs; the call has " + std::to_string(args.size()) +
                              " operands and " + std::to_string(rets.size()) + " results");
  std::vector<std::vector<int32_t>> prefetch;
  std::vector<mosaic::WindowArray> windows;
  for (size_t i = 0; i < args.size(); ++i) {
    const ffi::ErrorOr<ffi::AnyBuffer> arg = args.get<ffi::AnyBuffer>(i);
    if (arg.has_error()) throw mosaic::MosaicError("kgen_mosaic_cpu: operand " + std::to_string(i) + " is not a buffer");
    if (i < prefetch_count)
      prefetch.push_back(prefetch_values(*arg, i));
    else
      windows.push_back({view_of(*arg), mosaic::ArrayRole::kInput});
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    const ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> ret = rets.get<ffi::AnyBuffer>(i);
    if (ret.has_error()) throw mosaic::MosaicError("kgen_mosaic_cpu: result " + std::to_string(i) + " is not a buffer");
    ffi::Result<ffi::AnyBuffer> result = *ret;
    windows.push_back({view_of(*result), mosaic::ArrayRole::kOutput});
  }
  run_parallel_grid(kernel, prefetch, windows);
}

ffi::Error mosaic_cpu(ffi::RemainingArgs args, ffi::RemainingRets rets, std::string_view kernel,
                      std::string_view sha256) {
  try {
    run_kernel(args, rets, kernel, sha256);
    return ffi::Error::Success();
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kInternal, e.what());
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(kgen_mosaic_cpu, mosaic_cpu,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<std::string_view>("kernel")
                                  .Attr<std::string_view>("sha256"));
