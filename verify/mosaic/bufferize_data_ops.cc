// Buffered forms of the ops that compute or rearrange vector data: constants,
// elementwise arithmetic, broadcasts, reshapes, transposes, slices, steps and masks.
#include <numeric>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "vector_buffers.h"

namespace kgen::mosaic::buffers {
namespace {

mlir::LogicalResult constant(mlir::arith::ConstantOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = llvm::cast<VectorType>(op.getType());
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
  if (!dense) return op.emitOpError("vector constant is not dense");
  if (dense.isSplat()) {
    Value buffer = buffers.allocate(b, loc, type);
    int64_t width = row_width(type.getShape().back());
    auto row_type = VectorType::get({width}, type.getElementType());
    Value row = mlir::arith::ConstantOp::create(
        b, loc, row_type,
        mlir::DenseElementsAttr::get(row_type, dense.getSplatValue<mlir::Attribute>()));
    for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
      store_row(b, loc, row, buffer, idx);
    });
    buffers.bind(op.getResult(), buffer);
    return mlir::success();
  }
  // Non-splat data goes to a read-only global: the buffer is never written, as all are.
  mlir::MemRefType memref = storage_type(type);
  auto tensor = mlir::RankedTensorType::get(type.getShape(), memref.getElementType());
  mlir::DenseElementsAttr init;
  if (type.getElementType().isInteger(1)) {
    std::vector<int8_t> bytes;
    for (bool bit : dense.getValues<bool>()) bytes.push_back(bit ? 1 : 0);
    init = mlir::DenseElementsAttr::get(tensor, llvm::ArrayRef<int8_t>(bytes));
  } else {
    init = dense.reshape(tensor);
  }
  std::string name = buffers.next_global_name();
  {
    OpBuilder module_builder = OpBuilder::atBlockBegin(buffers.module().getBody());
    mlir::memref::GlobalOp::create(module_builder, loc, name,
                                   module_builder.getStringAttr("private"), memref, init,
                                   /*constant=*/true,
                                   /*alignment=*/module_builder.getI64IntegerAttr(64));
  }
  buffers.bind(op.getResult(), mlir::memref::GetGlobalOp::create(b, loc, memref, name));
  return mlir::success();
}

// One row at a time through a clone of the op, whatever the op is: arith and math ops are
// defined elementwise, so they mean the same on a row as on the whole vector.
mlir::LogicalResult elementwise(mlir::Operation* op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto type = llvm::cast<VectorType>(op->getResult(0).getType());
  for (Value result : op->getResults()) {
    if (llvm::cast<VectorType>(result.getType()).getShape() != type.getShape()) {
      return op->emitOpError("elementwise results differ in shape");
    }
  }
  for (Value operand : op->getOperands()) {
    auto vec = llvm::dyn_cast<VectorType>(operand.getType());
    if (vec && vec.getShape() != type.getShape()) {
      return op->emitOpError("elementwise operands differ in shape");
    }
  }
  std::vector<Value> results;
  for (Value result : op->getResults()) {
    results.push_back(buffers.allocate(b, loc, llvm::cast<VectorType>(result.getType())));
  }
  int64_t width = row_width(type.getShape().back());
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    mlir::IRMapping mapping;
    for (Value operand : op->getOperands()) {
      if (auto vec = llvm::dyn_cast<VectorType>(operand.getType())) {
        mapping.map(operand,
                    load_row(b, loc, buffers.get(operand), idx, width, vec.getElementType()));
      }
    }
    mlir::Operation* row_op = b.clone(*op, mapping);
    for (unsigned i = 0; i < row_op->getNumResults(); ++i) {
      auto vec = llvm::cast<VectorType>(op->getResult(i).getType());
      row_op->getResult(i).setType(VectorType::get({width}, vec.getElementType()));
      store_row(b, loc, row_op->getResult(i), results[i], idx);
    }
  });
  for (unsigned i = 0; i < op->getNumResults(); ++i) buffers.bind(op->getResult(i), results[i]);
  return mlir::success();
}

mlir::LogicalResult broadcast(mlir::vector::BroadcastOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType type = op.getResultVectorType();
  Value buffer = buffers.allocate(b, loc, type);
  Value source = op.getSource();
  auto source_type = llvm::dyn_cast<VectorType>(source.getType());
  int64_t rank = type.getRank();
  int64_t width = row_width(type.getShape().back());
  int64_t source_rank = source_type ? source_type.getRank() : 0;
  bool row_from_source =
      source_type && source_rank > 0 && source_type.getShape().back() == type.getShape().back();
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    Value row;
    if (!source_type) {
      row = splat(b, loc, source, width);
    } else {
      // Source dims align with the result's trailing dims; size-1 dims stretch.
      llvm::SmallVector<Value> at;
      for (int64_t d = 0; d < source_rank; ++d) {
        int64_t result_dim = rank - source_rank + d;
        bool stretched = source_type.getDimSize(d) == 1 && type.getDimSize(result_dim) != 1;
        at.push_back(stretched ? index_constant(b, loc, 0) : idx[result_dim]);
      }
      if (row_from_source) {
        row = load_row(b, loc, buffers.get(source), at, width, type.getElementType());
      } else {
        row = splat(b, loc, load_scalar(b, loc, buffers.get(source), at, type.getElementType()),
                    width);
      }
    }
    store_row(b, loc, row, buffer, idx);
  });
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

// Row-major data is unchanged by a shape_cast: a view of the same buffer will do.
mlir::LogicalResult shape_cast(mlir::vector::ShapeCastOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType source_type = op.getSourceVectorType();
  VectorType type = op.getResultVectorType();
  if (source_type.getRank() == 0 || type.getRank() == 0) {
    return op.emitOpError("0-d vectors are not supported");
  }
  Value flat = buffers.get(op.getSource());
  if (source_type.getRank() > 1) {
    mlir::ReassociationIndices all(source_type.getRank());
    std::iota(all.begin(), all.end(), 0);
    flat = mlir::memref::CollapseShapeOp::create(b, loc, flat, {all});
  }
  Value result = flat;
  if (type.getRank() > 1) {
    mlir::ReassociationIndices all(type.getRank());
    std::iota(all.begin(), all.end(), 0);
    result = mlir::memref::ExpandShapeOp::create(b, loc, storage_type(type), flat, {all});
  }
  buffers.bind(op.getResult(), result);
  return mlir::success();
}

mlir::LogicalResult transpose(mlir::vector::TransposeOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType type = op.getResultVectorType();
  llvm::ArrayRef<int64_t> perm = op.getPermutation();
  Value source = buffers.get(op.getVector());
  Value buffer = buffers.allocate(b, loc, type);
  int64_t rank = type.getRank();
  // result[i] = source[j] with j[perm[d]] = i[d].
  auto source_index = [&](Indices idx) {
    llvm::SmallVector<Value> at(rank);
    for (int64_t d = 0; d < rank; ++d) at[perm[d]] = idx[d];
    return at;
  };
  if (perm.back() == rank - 1) {
    int64_t width = row_width(type.getShape().back());
    for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
      store_row(b, loc, load_row(b, loc, source, source_index(idx), width, type.getElementType()),
                buffer, idx);
    });
  } else {
    for_each_element(b, loc, type.getShape(), [&](OpBuilder& b, Location loc, Indices idx) {
      store_scalar(b, loc, load_scalar(b, loc, source, source_index(idx), type.getElementType()),
                   buffer, idx);
    });
  }
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

llvm::SmallVector<Value> position_values(OpBuilder& b, Location loc,
                                         llvm::ArrayRef<mlir::OpFoldResult> position) {
  llvm::SmallVector<Value> values;
  for (mlir::OpFoldResult p : position) {
    if (auto attr = llvm::dyn_cast<mlir::Attribute>(p)) {
      values.push_back(index_constant(b, loc, llvm::cast<mlir::IntegerAttr>(attr).getInt()));
    } else {
      values.push_back(llvm::cast<Value>(p));
    }
  }
  return values;
}

mlir::LogicalResult extract(mlir::vector::ExtractOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType source_type = op.getSourceVectorType();
  Value source = buffers.get(op.getSource());
  llvm::SmallVector<Value> position = position_values(b, loc, op.getMixedPosition());
  auto type = llvm::dyn_cast<VectorType>(op.getResult().getType());
  if (!type) {
    op.getResult().replaceAllUsesWith(
        load_scalar(b, loc, source, position, source_type.getElementType()));
    return mlir::success();
  }
  Value buffer = buffers.allocate(b, loc, type);
  int64_t width = row_width(type.getShape().back());
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    llvm::SmallVector<Value> at(position);
    at.append(idx.begin(), idx.end());
    store_row(b, loc, load_row(b, loc, source, at, width, type.getElementType()), buffer, idx);
  });
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

// The destination's contents, unless it is poison (as tpu.concatenate's is).
Value copy_of_dest(OpBuilder& b, Location loc, Value dest, BufferMap& buffers) {
  auto type = llvm::cast<VectorType>(dest.getType());
  Value buffer = buffers.allocate(b, loc, type);
  if (!dest.getDefiningOp<mlir::ub::PoisonOp>()) {
    llvm::SmallVector<Value> zeros(type.getRank(), index_constant(b, loc, 0));
    copy_into(b, loc, buffers.get(dest), type.getShape(), type.getElementType(), buffer, zeros);
  }
  return buffer;
}

mlir::LogicalResult insert(mlir::vector::InsertOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType type = op.getDestVectorType();
  Value buffer = copy_of_dest(b, loc, op.getDest(), buffers);
  llvm::SmallVector<Value> position = position_values(b, loc, op.getMixedPosition());
  Value value = op.getValueToStore();
  if (auto value_type = llvm::dyn_cast<VectorType>(value.getType())) {
    position.append(value_type.getRank(), index_constant(b, loc, 0));
    copy_into(b, loc, buffers.get(value), value_type.getShape(), type.getElementType(), buffer,
              position);
  } else {
    store_scalar(b, loc, value, buffer, position);
  }
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

bool unit_strides(mlir::ArrayAttr strides) {
  return llvm::all_of(
      strides, [](mlir::Attribute s) { return llvm::cast<mlir::IntegerAttr>(s).getInt() == 1; });
}

mlir::LogicalResult extract_strided_slice(mlir::vector::ExtractStridedSliceOp op,
                                          BufferMap& buffers) {
  if (!unit_strides(op.getStrides())) return op.emitOpError("non-unit strides are not supported");
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = llvm::cast<VectorType>(op.getType());
  Value source = buffers.get(op.getSource());
  Value buffer = buffers.allocate(b, loc, type);
  std::vector<int64_t> offsets;
  for (mlir::Attribute a : op.getOffsets())
    offsets.push_back(llvm::cast<mlir::IntegerAttr>(a).getInt());
  offsets.resize(type.getRank(), 0);
  int64_t width = row_width(type.getShape().back());
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    llvm::SmallVector<Value> at;
    for (size_t d = 0; d < idx.size(); ++d) {
      at.push_back(mlir::arith::AddIOp::create(b, loc, idx[d], index_constant(b, loc, offsets[d])));
    }
    store_row(b, loc, load_row(b, loc, source, at, width, type.getElementType()), buffer, idx);
  });
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

mlir::LogicalResult insert_strided_slice(mlir::vector::InsertStridedSliceOp op,
                                         BufferMap& buffers) {
  if (!unit_strides(op.getStrides())) return op.emitOpError("non-unit strides are not supported");
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType source_type = op.getSourceVectorType();
  Value buffer = copy_of_dest(b, loc, op.getDest(), buffers);
  llvm::SmallVector<Value> offsets;
  for (mlir::Attribute a : op.getOffsets()) {
    offsets.push_back(index_constant(b, loc, llvm::cast<mlir::IntegerAttr>(a).getInt()));
  }
  copy_into(b, loc, buffers.get(op.getValueToStore()), source_type.getShape(),
            source_type.getElementType(), buffer, offsets);
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

mlir::LogicalResult step(mlir::vector::StepOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = llvm::cast<VectorType>(op.getType());
  Value buffer = buffers.allocate(b, loc, type);
  int64_t width = row_width(type.getShape().back());
  Value lanes =
      mlir::vector::StepOp::create(b, loc, VectorType::get({width}, type.getElementType()));
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    Value row = mlir::arith::AddIOp::create(b, loc, lanes, splat(b, loc, idx.back(), width));
    store_row(b, loc, row, buffer, idx);
  });
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

mlir::LogicalResult from_elements(mlir::vector::FromElementsOp op, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VectorType type = op.getType();
  Value buffer = buffers.allocate(b, loc, type);
  llvm::ArrayRef<int64_t> shape = type.getShape();
  for (auto [linear, element] : llvm::enumerate(op.getElements())) {
    llvm::SmallVector<Value> at(shape.size());
    int64_t rest = static_cast<int64_t>(linear);
    for (size_t d = shape.size(); d-- > 0;) {
      at[d] = index_constant(b, loc, rest % shape[d]);
      rest /= shape[d];
    }
    store_scalar(b, loc, element, buffer, at);
  }
  buffers.bind(op.getResult(), buffer);
  return mlir::success();
}

// mask[i] = AND over d of (i[d] < bound[d]).
mlir::LogicalResult mask(mlir::Operation* op, llvm::ArrayRef<Value> bounds, BufferMap& buffers) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto type = llvm::cast<VectorType>(op->getResult(0).getType());
  Value buffer = buffers.allocate(b, loc, type);
  int64_t width = row_width(type.getShape().back());
  auto index_row = VectorType::get({width}, b.getIndexType());
  Value lanes = mlir::vector::StepOp::create(b, loc, index_row);
  for_each_row(b, loc, type.getShape(), width, [&](OpBuilder& b, Location loc, Indices idx) {
    Value inside = mlir::arith::ConstantIntOp::create(b, loc, 1, 1);
    for (size_t d = 0; d + 1 < idx.size(); ++d) {
      Value lt =
          mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::slt, idx[d], bounds[d]);
      inside = mlir::arith::AndIOp::create(b, loc, inside, lt);
    }
    Value columns = mlir::arith::AddIOp::create(b, loc, lanes, splat(b, loc, idx.back(), width));
    Value row = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::slt, columns,
                                            splat(b, loc, bounds.back(), width));
    row = mlir::arith::AndIOp::create(b, loc, row, splat(b, loc, inside, width));
    store_row(b, loc, row, buffer, idx);
  });
  buffers.bind(op->getResult(0), buffer);
  return mlir::success();
}

}  // namespace

mlir::LogicalResult bufferize_data_op(mlir::Operation* op, BufferMap& buffers, bool& handled) {
  handled = true;
  if (auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) return constant(c, buffers);
  if (auto poison = llvm::dyn_cast<mlir::ub::PoisonOp>(op)) {
    OpBuilder b(op);
    buffers.bind(poison.getResult(),
                 buffers.allocate(b, op->getLoc(), llvm::cast<VectorType>(poison.getType())));
    return mlir::success();
  }
  if (auto bc = llvm::dyn_cast<mlir::vector::BroadcastOp>(op)) return broadcast(bc, buffers);
  if (auto sc = llvm::dyn_cast<mlir::vector::ShapeCastOp>(op)) return shape_cast(sc, buffers);
  if (auto t = llvm::dyn_cast<mlir::vector::TransposeOp>(op)) return transpose(t, buffers);
  if (auto e = llvm::dyn_cast<mlir::vector::ExtractOp>(op)) return extract(e, buffers);
  if (auto i = llvm::dyn_cast<mlir::vector::InsertOp>(op)) return insert(i, buffers);
  if (auto e = llvm::dyn_cast<mlir::vector::ExtractStridedSliceOp>(op)) {
    return extract_strided_slice(e, buffers);
  }
  if (auto i = llvm::dyn_cast<mlir::vector::InsertStridedSliceOp>(op)) {
    return insert_strided_slice(i, buffers);
  }
  if (auto s = llvm::dyn_cast<mlir::vector::StepOp>(op)) return step(s, buffers);
  if (auto f = llvm::dyn_cast<mlir::vector::FromElementsOp>(op)) return from_elements(f, buffers);
  if (auto m = llvm::dyn_cast<mlir::vector::CreateMaskOp>(op)) {
    std::vector<Value> bounds(m.getOperands().begin(), m.getOperands().end());
    return mask(op, bounds, buffers);
  }
  if (auto m = llvm::dyn_cast<mlir::vector::ConstantMaskOp>(op)) {
    OpBuilder b(op);
    std::vector<Value> bounds;
    for (int64_t size : m.getMaskDimSizes())
      bounds.push_back(index_constant(b, op->getLoc(), size));
    return mask(op, bounds, buffers);
  }
  if (op->hasTrait<mlir::OpTrait::Elementwise>() && op->getNumResults() > 0 &&
      llvm::all_of(op->getResultTypes(), [](mlir::Type t) { return llvm::isa<VectorType>(t); })) {
    return elementwise(op, buffers);
  }
  handled = false;
  return mlir::success();
}

}  // namespace kgen::mosaic::buffers
