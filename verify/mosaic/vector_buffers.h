// Internal to bufferize_*.cc: how vector values live in memory while the bufferizer
// turns n-D vector code into loops over 1-D rows.
//
// Why: LLVM gets a 128x128 vector as 128 separate <128 x float> values and a kernel like
// Splash's forward step becomes ~400k lines of straight-line IR that llc does not compile
// in 10 minutes. Kept in buffers, every op becomes a small loop over rows and the
// compile time no longer depends on block sizes.
//
// Invariants:
// - Every vector value gets its own buffer, written once where the value is defined and
//   never again: buffers are immutable, so SSA values may share them (views, scf.yield)
//   and the upstream ownership-based deallocation frees them.
// - Buffers are contiguous row-major memrefs of the vector's shape. i1 vectors are stored
//   as i8 because LLVM packs <N x i1> in memory while scalar i1 takes a byte.
// - A row is a 1-D slice of the innermost dim, at most kMaxRowWidth lanes wide.
#pragma once

#include <functional>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kgen::mosaic::buffers {

// The MLIR vocabulary every bufferize_*.cc speaks (this header is internal to them).
using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::VectorType;
using Indices = llvm::ArrayRef<Value>;

inline constexpr int64_t kMaxRowWidth = 256;

// The width rows of a dim of this size are processed in: the dim itself when small,
// else its largest divisor up to kMaxRowWidth.
int64_t row_width(int64_t innermost_size);

mlir::MemRefType storage_type(mlir::VectorType type);

mlir::Value index_constant(mlir::OpBuilder& b, mlir::Location loc, int64_t value);

// Calls `body` once per row of `shape` rows of `width`: `indices` has one entry per dim,
// the last being the row's first column. Dims of size 1 get a constant 0, not a loop.
using RowBody =
    std::function<void(mlir::OpBuilder&, mlir::Location, llvm::ArrayRef<mlir::Value> indices)>;
void for_each_row(mlir::OpBuilder& b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                  int64_t width, const RowBody& body);

// Same, one call per element (width 1, the last index is the element's column).
void for_each_element(mlir::OpBuilder& b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                      const RowBody& body);

// Row and scalar access in the value's own element type (converting i1 <-> i8 storage).
mlir::Value load_row(mlir::OpBuilder& b, mlir::Location loc, mlir::Value buffer,
                     llvm::ArrayRef<mlir::Value> indices, int64_t width, mlir::Type element);
void store_row(mlir::OpBuilder& b, mlir::Location loc, mlir::Value row, mlir::Value buffer,
               llvm::ArrayRef<mlir::Value> indices);
mlir::Value load_scalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Value buffer,
                        llvm::ArrayRef<mlir::Value> indices, mlir::Type element);
void store_scalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar, mlir::Value buffer,
                  llvm::ArrayRef<mlir::Value> indices);

mlir::Value splat(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar, int64_t width);

// Copies all of `source` (a buffer of `shape`) into `dest` at `offsets` (one per dest dim;
// source dims align with dest's trailing dims).
void copy_into(mlir::OpBuilder& b, mlir::Location loc, mlir::Value source,
               llvm::ArrayRef<int64_t> shape, mlir::Type element, mlir::Value dest,
               llvm::ArrayRef<mlir::Value> offsets);

// Maps vector values to their buffers while the bufferizer rewrites a function.
class BufferMap {
 public:
  explicit BufferMap(mlir::ModuleOp module) : module_(module) {}

  // The buffer of a vector value (null if it has none yet).
  mlir::Value get(mlir::Value vector) const;
  void bind(mlir::Value vector, mlir::Value buffer) { map_[vector] = buffer; }

  mlir::Value allocate(mlir::OpBuilder& b, mlir::Location loc, mlir::VectorType type) const;
  mlir::ModuleOp module() const { return module_; }
  // A fresh symbol name for a constant global.
  std::string next_global_name();

 private:
  mlir::ModuleOp module_;
  llvm::DenseMap<mlir::Value, mlir::Value> map_;
  int globals_ = 0;
};

// Per-op rewrites: each emits, before `op`, code that fills buffers for op's vector
// results (binding them) or replaces op's scalar results, and leaves `op` for the caller
// to erase. Failure means an error was emitted at `op`.
mlir::LogicalResult bufferize_data_op(mlir::Operation* op, BufferMap& buffers, bool& handled);
mlir::LogicalResult bufferize_memory_op(mlir::Operation* op, BufferMap& buffers, bool& handled);
mlir::LogicalResult bufferize_reduction_op(mlir::Operation* op, BufferMap& buffers, bool& handled);
mlir::LogicalResult bufferize_contract_op(mlir::Operation* op, BufferMap& buffers, bool& handled);

}  // namespace kgen::mosaic::buffers
