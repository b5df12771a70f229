// Buffered forms of the ops that move vectors between kernel memrefs and registers:
// vector.load/store, vector.maskedload/maskedstore and minor-identity in-bounds
// vector.transfer_read/write (what tpu.vector_load/store lower to). Each becomes a row
// copy between the kernel memref and the value's buffer.
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "vector_buffers.h"

namespace kgen::mosaic::buffers {
namespace {

// A vector of rank r covers the innermost r dims of the memref starting at `base`.
llvm::SmallVector<Value> memref_index(OpBuilder& b, Location loc, mlir::ValueRange base,
                                      Indices idx) {
  llvm::SmallVector<Value> at(base.begin(), base.end());
  size_t lead = at.size() - idx.size();
  for (size_t d = 0; d < idx.size(); ++d) {
    at[lead + d] = mlir::arith::AddIOp::create(b, loc, at[lead + d], idx[d]);
  }
  return at;
}

struct Access {
  Value memref;
  mlir::ValueRange indices;
  VectorType type;
  Value mask;      // vector of i1, or null
  Value padding;   // scalar for masked-off lanes of a read, or null
  Value passthru;  // vector for masked-off lanes of a read, or null
};

Value read(mlir::Operation* op, const Access& a, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value buffer = buffers.allocate(b, loc, a.type);
  int64_t width = row_width(a.type.getShape().back());
  mlir::Type element = a.type.getElementType();
  auto row_type = VectorType::get({width}, element);
  for_each_row(b, loc, a.type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    llvm::SmallVector<Value> at = memref_index(b, loc, a.indices, idx);
    Value row;
    if (a.mask) {
      Value mask = load_row(b, loc, buffers.get(a.mask), idx, width, b.getI1Type());
      Value pass = a.passthru ? load_row(b, loc, buffers.get(a.passthru), idx, width, element)
                              : splat(b, loc, a.padding, width);
      row = mlir::vector::MaskedLoadOp::create(b, loc, row_type, a.memref, at, mask, pass);
    } else {
      row = mlir::vector::LoadOp::create(b, loc, row_type, a.memref, at);
    }
    store_row(b, loc, row, buffer, idx);
  });
  return buffer;
}

void write(mlir::Operation* op, Value value, const Access& a, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  int64_t width = row_width(a.type.getShape().back());
  mlir::Type element = a.type.getElementType();
  for_each_row(b, loc, a.type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    llvm::SmallVector<Value> at = memref_index(b, loc, a.indices, idx);
    Value row = load_row(b, loc, buffers.get(value), idx, width, element);
    if (a.mask) {
      Value mask = load_row(b, loc, buffers.get(a.mask), idx, width, b.getI1Type());
      mlir::vector::MaskedStoreOp::create(b, loc, a.memref, at, mask, row);
    } else {
      mlir::vector::StoreOp::create(b, loc, row, a.memref, at);
    }
  });
}

template <typename TransferOp>
mlir::LogicalResult check_transfer(TransferOp op) {
  if (!llvm::isa<mlir::MemRefType>(op.getBase().getType())) {
    return op.emitOpError("transfers on tensors are not supported");
  }
  if (!op.getPermutationMap().isMinorIdentity()) {
    return op.emitOpError("only minor-identity permutation maps are supported");
  }
  if (!llvm::all_of(op.getInBoundsValues(), [](bool in) { return in; })) {
    return op.emitOpError("only in-bounds transfers are supported");
  }
  if (op.getVectorType().getRank() == 0) return op.emitOpError("0-d vectors are not supported");
  return mlir::success();
}

}  // namespace

mlir::LogicalResult bufferize_memory_op(mlir::Operation* op, BufferMap& buffers, bool& handled) {
  handled = true;
  if (auto load = llvm::dyn_cast<mlir::vector::LoadOp>(op)) {
    Access a{load.getBase(), load.getIndices(), load.getVectorType(), {}, {}, {}};
    buffers.bind(load.getResult(), read(op, a, buffers));
    return mlir::success();
  }
  if (auto store = llvm::dyn_cast<mlir::vector::StoreOp>(op)) {
    Access a{store.getBase(), store.getIndices(), store.getVectorType(), {}, {}, {}};
    write(op, store.getValueToStore(), a, buffers);
    return mlir::success();
  }
  if (auto load = llvm::dyn_cast<mlir::vector::MaskedLoadOp>(op)) {
    Access a{load.getBase(),    load.getIndices(), load.getVectorType(), load.getMask(), {},
             load.getPassThru()};
    buffers.bind(load.getResult(), read(op, a, buffers));
    return mlir::success();
  }
  if (auto store = llvm::dyn_cast<mlir::vector::MaskedStoreOp>(op)) {
    Access a{store.getBase(), store.getIndices(), store.getVectorType(), store.getMask(), {}, {}};
    write(op, store.getValueToStore(), a, buffers);
    return mlir::success();
  }
  if (auto transfer = llvm::dyn_cast<mlir::vector::TransferReadOp>(op)) {
    if (mlir::failed(check_transfer(transfer))) return mlir::failure();
    Access a{transfer.getBase(), transfer.getIndices(), transfer.getVectorType(),
             transfer.getMask(), transfer.getPadding(), {}};
    buffers.bind(transfer.getResult(), read(op, a, buffers));
    return mlir::success();
  }
  if (auto transfer = llvm::dyn_cast<mlir::vector::TransferWriteOp>(op)) {
    if (mlir::failed(check_transfer(transfer))) return mlir::failure();
    Access a{transfer.getBase(),
             transfer.getIndices(),
             transfer.getVectorType(),
             transfer.getMask(),
             {},
             {}};
    write(op, transfer.getVector(), a, buffers);
    return mlir::success();
  }
  handled = false;
  return mlir::success();
}

}  // namespace kgen::mosaic::buffers
