#include "lower_tpu_ops.h"

#include <vector>

#include "dialect/tpu_dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace kgen::mosaic {
namespace {

using mlir::Value;

// Widens a matmul operand to the accumulator's element type: the MXU multiplies bf16
// exactly into f32, which an f32 product of the widened values reproduces. `precision`
// is ignored: f32 products are at least as accurate as any TPU pass count, and a
// verifier should not add error of its own.
Value widen(mlir::OpBuilder& b, mlir::Location loc, Value v, mlir::Type acc_elem) {
  auto type = llvm::cast<mlir::VectorType>(v.getType());
  mlir::Type elem = type.getElementType();
  if (elem == acc_elem) return v;
  auto wide = mlir::VectorType::get(type.getShape(), acc_elem);
  if (llvm::isa<mlir::FloatType>(elem) && llvm::isa<mlir::FloatType>(acc_elem)) {
    if (elem.getIntOrFloatBitWidth() < acc_elem.getIntOrFloatBitWidth()) {
      return mlir::arith::ExtFOp::create(b, loc, wide, v);
    }
    return mlir::arith::TruncFOp::create(b, loc, wide, v);
  }
  if (llvm::isa<mlir::IntegerType>(elem) && llvm::isa<mlir::FloatType>(acc_elem)) {
    return mlir::arith::SIToFPOp::create(b, loc, wide, v);
  }
  if (llvm::isa<mlir::IntegerType>(elem) && llvm::isa<mlir::IntegerType>(acc_elem)) {
    return mlir::arith::ExtSIOp::create(b, loc, wide, v);
  }
  return nullptr;
}

// The dimension numbers that the legacy transpose flags stand for.
struct DotDims {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  std::vector<int64_t> output_order;  // (operand, dim) pairs
};

DotDims dot_dims(tpu::MatmulOp op) {
  DotDims d;
  if (auto attr = op.getDimensionNumbers()) {
    d.lhs_contracting.assign(attr->getLhsContractingDims().begin(),
                             attr->getLhsContractingDims().end());
    d.rhs_contracting.assign(attr->getRhsContractingDims().begin(),
                             attr->getRhsContractingDims().end());
    d.lhs_batch.assign(attr->getLhsBatchDims().begin(), attr->getLhsBatchDims().end());
    d.rhs_batch.assign(attr->getRhsBatchDims().begin(), attr->getRhsBatchDims().end());
    d.output_order.assign(attr->getOutputDimOrder().begin(), attr->getOutputDimOrder().end());
    return d;
  }
  bool tl = op.getTransposeLhs();
  bool tr = op.getTransposeRhs();
  d.lhs_contracting = {tl ? 0 : 1};
  d.rhs_contracting = {tr ? 1 : 0};
  d.output_order = {0, tl ? 1 : 0, 1, tr ? 0 : 1};
  return d;
}

mlir::LogicalResult lower_matmul(tpu::MatmulOp op) {
  mlir::OpBuilder b(op);
  mlir::Location loc = op.getLoc();
  auto acc_type = llvm::cast<mlir::VectorType>(op.getAcc().getType());
  Value lhs = widen(b, loc, op.getLhs(), acc_type.getElementType());
  Value rhs = widen(b, loc, op.getRhs(), acc_type.getElementType());
  if (!lhs || !rhs) return op.emitOpError("operand and accumulator types cannot be combined");
  DotDims d = dot_dims(op);

  // Iteration space: the output dims in acc order, then the contracting dims.
  int64_t num_out = acc_type.getRank();
  int64_t num_iter = num_out + static_cast<int64_t>(d.lhs_contracting.size());
  auto output_position = [&](int64_t operand, int64_t dim) -> int64_t {
    for (size_t i = 0; i + 1 < d.output_order.size(); i += 2) {
      if (d.output_order[i] == operand && d.output_order[i + 1] == dim) {
        return static_cast<int64_t>(i / 2);
      }
    }
    return -1;
  };
  auto operand_map = [&](int64_t operand, int64_t rank, const std::vector<int64_t>& contracting,
                         const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& lhs_batch) -> std::optional<mlir::AffineMap> {
    std::vector<mlir::AffineExpr> exprs;
    for (int64_t dim = 0; dim < rank; ++dim) {
      auto c = llvm::find(contracting, dim);
      if (c != contracting.end()) {
        exprs.push_back(b.getAffineDimExpr(num_out + (c - contracting.begin())));
        continue;
      }
      int64_t pos = output_position(operand, dim);
      auto bt = llvm::find(batch, dim);
      if (pos < 0 && bt != batch.end()) {
        // Batch dims appear in the output once, under the lhs's numbering.
        pos = output_position(0, lhs_batch[bt - batch.begin()]);
      }
      if (pos < 0) return std::nullopt;
      exprs.push_back(b.getAffineDimExpr(pos));
    }
    return mlir::AffineMap::get(num_iter, 0, exprs, b.getContext());
  };
  auto lhs_type = llvm::cast<mlir::VectorType>(lhs.getType());
  auto rhs_type = llvm::cast<mlir::VectorType>(rhs.getType());
  auto lhs_map = operand_map(0, lhs_type.getRank(), d.lhs_contracting, d.lhs_batch, d.lhs_batch);
  auto rhs_map = operand_map(1, rhs_type.getRank(), d.rhs_contracting, d.rhs_batch, d.lhs_batch);
  if (!lhs_map || !rhs_map) {
    return op.emitOpError("dimension_numbers leave an operand dim out of the output");
  }
  auto acc_map =
      mlir::AffineMap::getMultiDimIdentityMap(num_iter, b.getContext()).getMajorSubMap(num_out);
  std::vector<mlir::Attribute> iterators;
  for (int64_t i = 0; i < num_iter; ++i) {
    iterators.push_back(mlir::vector::IteratorTypeAttr::get(
        b.getContext(), i < num_out ? mlir::vector::IteratorType::parallel
                                    : mlir::vector::IteratorType::reduction));
  }
  Value result = mlir::vector::ContractionOp::create(
      b, loc, lhs, rhs, op.getAcc(), b.getAffineMapArrayAttr({*lhs_map, *rhs_map, acc_map}),
      b.getArrayAttr(iterators));
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return mlir::success();
}

// Row-major collapse of `dimensions`: dims[0] is the most significant digit.
void lower_iota(tpu::IotaOp op) {
  mlir::OpBuilder b(op);
  mlir::Location loc = op.getLoc();
  auto type = llvm::cast<mlir::VectorType>(op.getType());
  llvm::ArrayRef<int32_t> dims = op.getDimensions();
  mlir::Type elem = type.getElementType();
  Value sum = mlir::arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  int64_t multiplier = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    int64_t dim = dims[k];
    int64_t size = type.getDimSize(dim);
    Value step =
        mlir::vector::StepOp::create(b, loc, mlir::VectorType::get({size}, b.getIndexType()));
    auto line_type = mlir::VectorType::get({size}, elem);
    if (!elem.isIndex()) step = mlir::arith::IndexCastOp::create(b, loc, line_type, step);
    if (multiplier != 1) {
      Value scale = mlir::arith::ConstantOp::create(
          b, loc, line_type,
          mlir::DenseElementsAttr::get(line_type, b.getIntegerAttr(elem, multiplier)));
      step = mlir::arith::MulIOp::create(b, loc, step, scale);
    }
    // size x 1 x ... x 1 aligns the line with `dim`; broadcast then adds leading dims.
    std::vector<int64_t> column(type.getRank() - dim, 1);
    column[0] = size;
    step = mlir::vector::ShapeCastOp::create(b, loc, mlir::VectorType::get(column, elem), step);
    step = mlir::vector::BroadcastOp::create(b, loc, type, step);
    sum = mlir::arith::AddIOp::create(b, loc, sum, step);
    multiplier *= size;
  }
  op.getResult().replaceAllUsesWith(sum);
  op.erase();
}

// Places `pieces` one after another along `dim` of `type`.
Value assemble(mlir::OpBuilder& b, mlir::Location loc, mlir::VectorType type, int64_t dim,
               llvm::ArrayRef<Value> pieces) {
  Value dest = mlir::ub::PoisonOp::create(b, loc, type);
  std::vector<int64_t> offsets(type.getRank(), 0);
  std::vector<int64_t> strides(type.getRank(), 1);
  for (Value piece : pieces) {
    dest = mlir::vector::InsertStridedSliceOp::create(b, loc, piece, dest, offsets, strides);
    offsets[dim] += llvm::cast<mlir::VectorType>(piece.getType()).getDimSize(dim);
  }
  return dest;
}

bool unit_strides(llvm::ArrayRef<int32_t> strides) {
  return llvm::all_of(strides, [](int32_t s) { return s == 1; });
}

llvm::SmallVector<bool> all_in_bounds(mlir::VectorType type) {
  return llvm::SmallVector<bool>(type.getRank(), true);
}

Value zero_scalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Type elem) {
  return mlir::arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem));
}

// vector_load/vector_store become in-bounds transfers: the same minor-identity access,
// with the mask carried over.
mlir::LogicalResult lower_vector_load(tpu::VectorLoadOp op) {
  if (!unit_strides(op.getStrides())) return op.emitOpError("strided loads are not supported");
  mlir::OpBuilder b(op);
  mlir::Location loc = op.getLoc();
  auto type = llvm::cast<mlir::VectorType>(op.getType());
  auto memref = llvm::cast<mlir::MemRefType>(op.getBase().getType());
  auto map = mlir::AffineMap::getMinorIdentityMap(memref.getRank(), type.getRank(), b.getContext());
  llvm::SmallVector<bool> in_bounds = all_in_bounds(type);
  Value read = mlir::vector::TransferReadOp::create(
      b, loc, type, op.getBase(), op.getIndices(), mlir::AffineMapAttr::get(map),
      zero_scalar(b, loc, type.getElementType()), op.getMask(), b.getBoolArrayAttr(in_bounds));
  op.getResult().replaceAllUsesWith(read);
  op.erase();
  return mlir::success();
}

mlir::LogicalResult lower_vector_store(tpu::VectorStoreOp op) {
  if (!unit_strides(op.getStrides())) return op.emitOpError("strided stores are not supported");
  mlir::OpBuilder b(op);
  mlir::Location loc = op.getLoc();
  Value value = op.getValueToStore();
  auto type = llvm::cast<mlir::VectorType>(value.getType());
  auto memref = llvm::cast<mlir::MemRefType>(op.getBase().getType());
  auto map = mlir::AffineMap::getMinorIdentityMap(memref.getRank(), type.getRank(), b.getContext());
  llvm::SmallVector<bool> in_bounds = all_in_bounds(type);
  if (op.getAdd()) {
    Value old = mlir::vector::TransferReadOp::create(
        b, loc, type, op.getBase(), op.getIndices(), mlir::AffineMapAttr::get(map),
        zero_scalar(b, loc, type.getElementType()), Value(), b.getBoolArrayAttr(in_bounds));
    value = llvm::isa<mlir::FloatType>(type.getElementType())
                ? Value(mlir::arith::AddFOp::create(b, loc, old, value))
                : Value(mlir::arith::AddIOp::create(b, loc, old, value));
  }
  mlir::vector::TransferWriteOp::create(b, loc, value, op.getBase(), op.getIndices(),
                                        mlir::AffineMapAttr::get(map), op.getMask(),
                                        b.getBoolArrayAttr(in_bounds));
  op.erase();
  return mlir::success();
}

// ---- DMAs (dma_runtime.h gives them their meaning)

int64_t element_bytes(mlir::Type element) {
  if (llvm::isa<tpu::DMASemaphoreType>(element)) return 4;  // a semaphore is an i32 here
  return static_cast<int64_t>(element.getIntOrFloatBitWidth()) / 8;
}

// The i64 address of the first element of a DMA's operand: a kernel argument, or a
// memref_squeeze / memref_slice chain of one, each slice contiguous (the CPU copies
// contiguous bytes only, which is what every page or block of a kgen kernel is).
mlir::FailureOr<Value> dma_address(mlir::OpBuilder& b, mlir::Location loc, Value operand, mlir::Operation* user) {
  mlir::Type i64 = b.getI64Type();
  Value offset = mlir::arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
  Value at = operand;
  while (!llvm::isa<mlir::BlockArgument>(at)) {
    if (auto squeeze = at.getDefiningOp<tpu::MemRefSqueezeOp>()) {
      at = squeeze.getInput();
      continue;
    }
    auto slice = at.getDefiningOp<tpu::MemRefSliceOp>();
    if (!slice) return user->emitOpError("copies a memref that is neither a kernel argument nor a slice of one");
    auto whole = llvm::cast<mlir::MemRefType>(slice.getMemRef().getType());
    auto part = llvm::cast<mlir::MemRefType>(slice.getResult().getType());
    // Contiguous: past the first dim of the slice longer than 1, every dim is whole.
    bool partial_seen = false;
    for (int64_t d = 0; d < whole.getRank(); ++d) {
      if (partial_seen && part.getDimSize(d) != whole.getDimSize(d))
        return user->emitOpError("copies a slice that is not contiguous in memory; the CPU executor copies contiguous slices only");
      partial_seen = partial_seen || part.getDimSize(d) != 1;
    }
    int64_t stride = 1;
    for (int64_t d = whole.getRank(); d-- > 0;) {
      Value index = mlir::arith::ExtSIOp::create(b, loc, i64, slice.getBaseIdx()[d]);
      Value scaled = mlir::arith::MulIOp::create(
          b, loc, index, mlir::arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(stride)));
      offset = mlir::arith::AddIOp::create(b, loc, offset, scaled);
      stride *= whole.getDimSize(d);
    }
    at = slice.getMemRef();
  }
  auto root = llvm::cast<mlir::MemRefType>(at.getType());
  Value base = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b, loc, at);
  base = mlir::arith::IndexCastOp::create(b, loc, i64, base);
  Value bytes = mlir::arith::MulIOp::create(
      b, loc, offset,
      mlir::arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(element_bytes(root.getElementType()))));
  return Value(mlir::arith::AddIOp::create(b, loc, base, bytes));
}

// Semaphore scratch is i32 storage on the CPU: the kernel's arguments change type, and only
// the DMA calls (through raw addresses) use them.
void retype_semaphore_arguments(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (func.isExternal()) continue;
    bool changed = false;
    for (mlir::BlockArgument arg : func.getArguments()) {
      auto memref = llvm::dyn_cast<mlir::MemRefType>(arg.getType());
      if (!memref || !llvm::isa<tpu::DMASemaphoreType>(memref.getElementType())) continue;
      arg.setType(mlir::MemRefType::get(memref.getShape(), mlir::IntegerType::get(module.getContext(), 32)));
      changed = true;
    }
    if (changed)
      func.setType(mlir::FunctionType::get(module.getContext(), func.getBody().getArgumentTypes(),
                                           func.getFunctionType().getResults()));
  }
}

// tpu.enqueue_dma and tpu.wait_dma2 become calls of kgen_mosaic_dma_start/_wait(source,
// target, bytes, semaphore); the slices they were given are then dead.
mlir::LogicalResult lower_dmas(mlir::ModuleOp module) {
  std::vector<mlir::Operation*> dmas, views;
  module.walk([&](mlir::Operation* op) {
    if (llvm::isa<tpu::EnqueueDMAOp, tpu::WaitDMA2Op>(op)) dmas.push_back(op);
    if (llvm::isa<tpu::MemRefSliceOp, tpu::MemRefSqueezeOp>(op)) views.push_back(op);
  });
  if (dmas.empty() && views.empty()) return mlir::success();
  mlir::OpBuilder top = mlir::OpBuilder::atBlockBegin(module.getBody());
  mlir::Type i64 = top.getI64Type();
  auto signature = top.getFunctionType({i64, i64, i64, i64}, {});
  for (const char* name : {"kgen_mosaic_dma_start", "kgen_mosaic_dma_wait"}) {
    auto declaration = mlir::func::FuncOp::create(top, module.getLoc(), name, signature);
    declaration.setPrivate();
  }
  bool ok = true;
  for (mlir::Operation* op : dmas) {
    mlir::OpBuilder b(op);
    mlir::Location loc = op->getLoc();
    const bool start = llvm::isa<tpu::EnqueueDMAOp>(op);
    Value source = start ? llvm::cast<tpu::EnqueueDMAOp>(op).getSource() : llvm::cast<tpu::WaitDMA2Op>(op).getSrc();
    Value target = start ? llvm::cast<tpu::EnqueueDMAOp>(op).getTarget() : llvm::cast<tpu::WaitDMA2Op>(op).getDst();
    Value semaphore =
        start ? llvm::cast<tpu::EnqueueDMAOp>(op).getTargetSemaphore() : llvm::cast<tpu::WaitDMA2Op>(op).getSemaphore();
    auto type = llvm::cast<mlir::MemRefType>(target.getType());
    const int64_t bytes = type.getNumElements() * element_bytes(type.getElementType());
    mlir::FailureOr<Value> from = dma_address(b, loc, source, op);
    mlir::FailureOr<Value> to = dma_address(b, loc, target, op);
    mlir::FailureOr<Value> signal = dma_address(b, loc, semaphore, op);
    if (mlir::failed(from) || mlir::failed(to) || mlir::failed(signal)) {
      ok = false;
      continue;
    }
    Value size = mlir::arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bytes));
    mlir::func::CallOp::create(b, loc, start ? "kgen_mosaic_dma_start" : "kgen_mosaic_dma_wait", mlir::TypeRange{},
                               mlir::ValueRange{*from, *to, size, *signal});
    op->erase();
  }
  if (!ok) return mlir::failure();
  // Views were only DMA operands here: users before producers, so erase backwards.
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    if (!(*it)->use_empty()) {
      ok = false;
      (*it)->emitOpError("is used by something other than a DMA, which has no CPU lowering");
      continue;
    }
    (*it)->erase();
  }
  if (ok) retype_semaphore_arguments(module);
  return mlir::success(ok);
}

}  // namespace

mlir::LogicalResult lower_tpu_ops(mlir::ModuleOp module) {
  if (mlir::failed(lower_dmas(module))) return mlir::failure();
  std::vector<mlir::Operation*> ops;
  module.walk([&](mlir::Operation* op) {
    if (llvm::isa<tpu::TPUDialect>(op->getDialect())) ops.push_back(op);
  });
  bool ok = true;
  for (mlir::Operation* op : ops) {
    mlir::OpBuilder b(op);
    mlir::Location loc = op->getLoc();
    mlir::LogicalResult result = mlir::success();
    if (auto matmul = llvm::dyn_cast<tpu::MatmulOp>(op)) {
      result = lower_matmul(matmul);
    } else if (auto iota = llvm::dyn_cast<tpu::IotaOp>(op)) {
      lower_iota(iota);
    } else if (auto load = llvm::dyn_cast<tpu::VectorLoadOp>(op)) {
      result = lower_vector_load(load);
    } else if (auto store = llvm::dyn_cast<tpu::VectorStoreOp>(op)) {
      result = lower_vector_store(store);
    } else if (auto concat = llvm::dyn_cast<tpu::ConcatenateOp>(op)) {
      std::vector<Value> pieces(concat.getSources().begin(), concat.getSources().end());
      Value v = assemble(b, loc, concat.getType(), concat.getDimension(), pieces);
      concat.getResult().replaceAllUsesWith(v);
      concat.erase();
    } else if (auto repeat = llvm::dyn_cast<tpu::RepeatOp>(op)) {
      std::vector<Value> pieces(repeat.getTimes(), repeat.getSource());
      Value v = assemble(b, loc, repeat.getType(), repeat.getDimension(), pieces);
      repeat.getResult().replaceAllUsesWith(v);
      repeat.erase();
    } else if (auto transpose = llvm::dyn_cast<tpu::TransposeOp>(op)) {
      Value v = mlir::vector::TransposeOp::create(b, loc, transpose.getVector(),
                                                  transpose.getPermutation());
      transpose.getResult().replaceAllUsesWith(v);
      transpose.erase();
    } else if (auto reciprocal = llvm::dyn_cast<tpu::ReciprocalOp>(op)) {
      auto type = llvm::cast<mlir::VectorType>(reciprocal.getType());
      Value one = mlir::arith::ConstantOp::create(
          b, loc, type,
          mlir::DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 1.0)));
      Value v = mlir::arith::DivFOp::create(b, loc, one, reciprocal.getInput());
      reciprocal.getResult().replaceAllUsesWith(v);
      reciprocal.erase();
    } else if (auto assume = llvm::dyn_cast<tpu::AssumeMultipleOp>(op)) {
      assume.getResult().replaceAllUsesWith(assume.getValue());
      assume.erase();
    } else {
      result = op->emitOpError("has no CPU lowering");
    }
    ok &= mlir::succeeded(result);
  }
  return mlir::success(ok);
}

}  // namespace kgen::mosaic
