// Buffered vector.multi_reduction and vector.reduction. The result buffer starts as the
// accumulator and each source row is folded into it: with vector.reduction when the row
// itself is reduced, elementwise when the row's dim is kept.
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "vector_buffers.h"

namespace kgen::mosaic::buffers {
namespace {

// Folds `source` (a buffer of `source_type`) over the dims flagged in `reduced` into
// `result`, a buffer of the kept dims already holding the accumulator. A result with no
// kept dims is a memref<1xT>.
void fold_into(OpBuilder& b, Location loc, mlir::vector::CombiningKind kind, Value source,
               VectorType source_type, const std::vector<bool>& reduced, Value result) {
  mlir::Type element = source_type.getElementType();
  int64_t width = row_width(source_type.getShape().back());
  bool keeps_any = llvm::is_contained(reduced, false);
  for_each_row(b, loc, source_type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    llvm::SmallVector<Value> at;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!reduced[d]) at.push_back(idx[d]);
    }
    if (!keeps_any) at.push_back(index_constant(b, loc, 0));
    Value row = load_row(b, loc, source, idx, width, element);
    if (reduced.back()) {
      Value acc = load_scalar(b, loc, result, at, element);
      Value folded = mlir::vector::ReductionOp::create(b, loc, kind, row, acc);
      store_scalar(b, loc, folded, result, at);
    } else {
      Value acc = load_row(b, loc, result, at, width, element);
      store_row(b, loc, mlir::vector::makeArithReduction(b, loc, kind, acc, row), result, at);
    }
  });
}

mlir::LogicalResult multi_reduction(mlir::vector::MultiDimReductionOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType source_type = op.getSourceVectorType();
  mlir::Type element = source_type.getElementType();
  std::vector<bool> reduced(source_type.getRank(), false);
  for (int64_t d : op.getReductionDims()) reduced[d] = true;
  Value result;
  auto result_type = llvm::dyn_cast<VectorType>(op.getType());
  if (result_type) {
    result = buffers.allocate(b, loc, result_type);
    llvm::SmallVector<Value> zeros(result_type.getRank(), index_constant(b, loc, 0));
    copy_into(b, loc, buffers.get(op.getAcc()), result_type.getShape(), element, result, zeros);
  } else {
    result = buffers.allocate(b, loc, VectorType::get({1}, element));
    store_scalar(b, loc, op.getAcc(), result, {index_constant(b, loc, 0)});
  }
  fold_into(b, loc, op.getKind(), buffers.get(op.getSource()), source_type, reduced, result);
  if (result_type) {
    buffers.bind(op.getResult(), result);
  } else {
    op.getResult().replaceAllUsesWith(
        load_scalar(b, loc, result, {index_constant(b, loc, 0)}, element));
  }
  return mlir::success();
}

mlir::LogicalResult reduction(mlir::vector::ReductionOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType source_type = op.getSourceVectorType();
  mlir::Type element = source_type.getElementType();
  int64_t width = row_width(source_type.getShape().back());
  Value source = buffers.get(op.getVector());
  Value zero = index_constant(b, loc, 0);
  if (width == source_type.getShape().back()) {
    Value row = load_row(b, loc, source, {zero}, width, element);
    op.getResult().replaceAllUsesWith(
        mlir::vector::ReductionOp::create(b, loc, op.getKind(), row, op.getAcc()).getResult());
    return mlir::success();
  }
  // Longer than a row: reduce the first row, then fold in the rest.
  Value result = buffers.allocate(b, loc, VectorType::get({1}, element));
  Value first = load_row(b, loc, source, {zero}, width, element);
  store_scalar(b, loc, mlir::vector::ReductionOp::create(b, loc, op.getKind(), first, op.getAcc()),
               result, {zero});
  for_each_row(
      b, loc, {source_type.getShape().back() - width}, width,
      [&](OpBuilder& b, Location loc, Indices idx) {
        Value column = mlir::arith::AddIOp::create(b, loc, idx[0], index_constant(b, loc, width));
        Value row = load_row(b, loc, source, {column}, width, element);
        Value acc = load_scalar(b, loc, result, {zero}, element);
        store_scalar(b, loc, mlir::vector::ReductionOp::create(b, loc, op.getKind(), row, acc),
                     result, {zero});
      });
  op.getResult().replaceAllUsesWith(load_scalar(b, loc, result, {zero}, element));
  return mlir::success();
}

}  // namespace

mlir::LogicalResult bufferize_reduction_op(mlir::Operation* op, BufferMap& buffers, bool& handled) {
  handled = true;
  if (auto r = llvm::dyn_cast<mlir::vector::MultiDimReductionOp>(op)) {
    return multi_reduction(r, buffers);
  }
  if (auto r = llvm::dyn_cast<mlir::vector::ReductionOp>(op)) return reduction(r, buffers);
  handled = false;
  return mlir::success();
}

}  // namespace kgen::mosaic::buffers
