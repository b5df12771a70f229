// Buffered vector.contract (what tpu.matmul lowers to), as a loop nest over the
// iteration space with rows along one dim so that the inner loop is vector code:
// - "axpy": the acc's innermost dim is the innermost dim of exactly one operand (p·v):
//   acc_row += lhs_scalar * rhs_row, summed over the contracting dims;
// - "dot": a contracting dim is innermost in both operands (q·kᵀ):
//   acc_elem += reduce(lhs_row * rhs_row);
// - otherwise scalar loops.
// The result starts as a copy of acc; products and sums are in acc's element type.
#include <optional>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "vector_buffers.h"

namespace kgen::mosaic::buffers {
namespace {

// Which iteration dim each operand dim is indexed by.
std::optional<std::vector<int64_t>> operand_dims(mlir::AffineMap map) {
  std::vector<int64_t> dims;
  for (mlir::AffineExpr e : map.getResults()) {
    auto d = llvm::dyn_cast<mlir::AffineDimExpr>(e);
    if (!d) return std::nullopt;
    dims.push_back(d.getPosition());
  }
  return dims;
}

struct Contraction {
  VectorType lhs_type, rhs_type, acc_type;
  std::vector<int64_t> lhs_dims, rhs_dims, acc_dims;  // operand dim -> iteration dim
  std::vector<int64_t> sizes;                         // per iteration dim
  std::vector<bool> is_reduction;
  mlir::Type element;

  // Index of an operand for the iteration point `iv` (one Value per iteration dim).
  static llvm::SmallVector<Value> at(const std::vector<int64_t>& dims, Indices iv) {
    llvm::SmallVector<Value> idx;
    for (int64_t d : dims) idx.push_back(iv[d]);
    return idx;
  }
};

Value multiply(OpBuilder& b, Location loc, Value x, Value y) {
  if (llvm::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(x.getType()))) {
    return mlir::arith::MulFOp::create(b, loc, x, y);
  }
  return mlir::arith::MulIOp::create(b, loc, x, y);
}

Value add(OpBuilder& b, Location loc, Value x, Value y) {
  if (llvm::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(x.getType()))) {
    return mlir::arith::AddFOp::create(b, loc, x, y);
  }
  return mlir::arith::AddIOp::create(b, loc, x, y);
}

// Loops over `dims` of the iteration space, filling `iv`; `body` runs innermost.
// `carried` is threaded through the loops as iter_args (a reduction's partial sum);
// nests that carry nothing pass a dummy index, which canonicalization drops.
using CarriedBody = std::function<Value(OpBuilder&, Location, Value carried)>;
Value loop_nest(OpBuilder& b, Location loc, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& sizes, const std::vector<int64_t>& steps,
                llvm::SmallVectorImpl<Value>& iv, size_t k, Value carried,
                const CarriedBody& body) {
  if (k == dims.size()) return body(b, loc, carried);
  int64_t d = dims[k];
  if (sizes[d] == steps[d]) {
    iv[d] = index_constant(b, loc, 0);
    return loop_nest(b, loc, dims, sizes, steps, iv, k + 1, carried, body);
  }
  auto loop =
      mlir::scf::ForOp::create(b, loc, index_constant(b, loc, 0), index_constant(b, loc, sizes[d]),
                               index_constant(b, loc, steps[d]), mlir::ValueRange{carried});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  iv[d] = loop.getInductionVar();
  Value next = loop_nest(b, loc, dims, sizes, steps, iv, k + 1, loop.getRegionIterArgs()[0], body);
  mlir::scf::YieldOp::create(b, loc, next);
  return loop.getResult(0);
}

// Splits the iteration dims into the output loops (all parallel dims) and the reduction
// loops, with `row_dim` (if any) stepped by `width` and excluded from both lists.
void split_dims(const Contraction& c, int64_t row_dim, std::vector<int64_t>& parallel,
                std::vector<int64_t>& reduction) {
  for (size_t d = 0; d < c.sizes.size(); ++d) {
    if (static_cast<int64_t>(d) == row_dim) continue;
    (c.is_reduction[d] ? reduction : parallel).push_back(static_cast<int64_t>(d));
  }
}

// acc_row[.., j:j+w] += sum_k lhs[.., k] * rhs[k, j:j+w] (or lhs and rhs swapped).
void axpy(OpBuilder& b, Location loc, const Contraction& c, Value lhs, Value rhs, Value result,
          int64_t row_dim, bool rows_from_rhs) {
  int64_t width = row_width(c.sizes[row_dim]);
  std::vector<int64_t> steps(c.sizes.size(), 1);
  steps[row_dim] = width;
  std::vector<int64_t> parallel, reduction;
  split_dims(c, row_dim, parallel, reduction);
  parallel.push_back(row_dim);
  llvm::SmallVector<Value> iv(c.sizes.size());
  Value no_carry = index_constant(b, loc, 0);
  loop_nest(
      b, loc, parallel, c.sizes, steps, iv, 0, no_carry,
      [&](OpBuilder& b, Location loc, Value carried) {
        auto acc_at = Contraction::at(c.acc_dims, iv);
        Value acc = load_row(b, loc, result, acc_at, width, c.element);
        Value sum = loop_nest(
            b, loc, reduction, c.sizes, steps, iv, 0, acc,
            [&](OpBuilder& b, Location loc, Value partial) {
              Value scalar =
                  rows_from_rhs
                      ? load_scalar(b, loc, lhs, Contraction::at(c.lhs_dims, iv), c.element)
                      : load_scalar(b, loc, rhs, Contraction::at(c.rhs_dims, iv), c.element);
              Value row =
                  rows_from_rhs
                      ? load_row(b, loc, rhs, Contraction::at(c.rhs_dims, iv), width, c.element)
                      : load_row(b, loc, lhs, Contraction::at(c.lhs_dims, iv), width, c.element);
              return add(b, loc, partial, multiply(b, loc, splat(b, loc, scalar, width), row));
            });
        store_row(b, loc, sum, result, acc_at);
        return carried;
      });
}

// acc[..] += sum_k reduce(lhs[.., k:k+w] * rhs[.., k:k+w]).
void dot(OpBuilder& b, Location loc, const Contraction& c, Value lhs, Value rhs, Value result,
         int64_t row_dim) {
  int64_t width = row_width(c.sizes[row_dim]);
  std::vector<int64_t> steps(c.sizes.size(), 1);
  steps[row_dim] = width;
  std::vector<int64_t> parallel, reduction;
  split_dims(c, row_dim, parallel, reduction);
  reduction.push_back(row_dim);
  llvm::SmallVector<Value> iv(c.sizes.size());
  auto row_type = VectorType::get({width}, c.element);
  Value zero_row = mlir::arith::ConstantOp::create(b, loc, row_type, b.getZeroAttr(row_type));
  Value no_carry = index_constant(b, loc, 0);
  loop_nest(
      b, loc, parallel, c.sizes, steps, iv, 0, no_carry,
      [&](OpBuilder& b, Location loc, Value carried) {
        Value partial = loop_nest(
            b, loc, reduction, c.sizes, steps, iv, 0, zero_row,
            [&](OpBuilder& b, Location loc, Value partial) {
              Value x = load_row(b, loc, lhs, Contraction::at(c.lhs_dims, iv), width, c.element);
              Value y = load_row(b, loc, rhs, Contraction::at(c.rhs_dims, iv), width, c.element);
              return add(b, loc, partial, multiply(b, loc, x, y));
            });
        auto acc_at = Contraction::at(c.acc_dims, iv);
        Value acc = load_scalar(b, loc, result, acc_at, c.element);
        Value sum = mlir::vector::ReductionOp::create(b, loc, mlir::vector::CombiningKind::ADD,
                                                      partial, acc);
        store_scalar(b, loc, sum, result, acc_at);
        return carried;
      });
}

void scalar_loops(OpBuilder& b, Location loc, const Contraction& c, Value lhs, Value rhs,
                  Value result) {
  std::vector<int64_t> steps(c.sizes.size(), 1);
  std::vector<int64_t> parallel, reduction;
  split_dims(c, -1, parallel, reduction);
  llvm::SmallVector<Value> iv(c.sizes.size());
  Value no_carry = index_constant(b, loc, 0);
  loop_nest(b, loc, parallel, c.sizes, steps, iv, 0, no_carry,
            [&](OpBuilder& b, Location loc, Value carried) {
              auto acc_at = Contraction::at(c.acc_dims, iv);
              Value acc = load_scalar(b, loc, result, acc_at, c.element);
              Value sum = loop_nest(
                  b, loc, reduction, c.sizes, steps, iv, 0, acc,
                  [&](OpBuilder& b, Location loc, Value partial) {
                    Value x = load_scalar(b, loc, lhs, Contraction::at(c.lhs_dims, iv), c.element);
                    Value y = load_scalar(b, loc, rhs, Contraction::at(c.rhs_dims, iv), c.element);
                    return add(b, loc, partial, multiply(b, loc, x, y));
                  });
              store_scalar(b, loc, sum, result, acc_at);
              return carried;
            });
}

mlir::LogicalResult contract(mlir::vector::ContractionOp op, BufferMap& buffers) {
  if (op.getKind() != mlir::vector::CombiningKind::ADD) {
    return op.emitOpError("only additive contractions are supported");
  }
  Contraction c;
  c.lhs_type = op.getLhsType();
  c.rhs_type = op.getRhsType();
  c.acc_type = llvm::dyn_cast<VectorType>(op.getAccType());
  if (!c.acc_type) return op.emitOpError("scalar accumulators are not supported");
  c.element = c.acc_type.getElementType();
  if (c.lhs_type.getElementType() != c.element || c.rhs_type.getElementType() != c.element) {
    return op.emitOpError("operands must have the accumulator's element type");
  }
  auto maps = op.getIndexingMapsArray();
  auto lhs_dims = operand_dims(maps[0]);
  auto rhs_dims = operand_dims(maps[1]);
  auto acc_dims = operand_dims(maps[2]);
  if (!lhs_dims || !rhs_dims || !acc_dims) {
    return op.emitOpError("indexing maps must be projected permutations");
  }
  c.lhs_dims = *lhs_dims;
  c.rhs_dims = *rhs_dims;
  c.acc_dims = *acc_dims;
  c.sizes.assign(maps[0].getNumDims(), 1);
  for (size_t i = 0; i < c.lhs_dims.size(); ++i) c.sizes[c.lhs_dims[i]] = c.lhs_type.getDimSize(i);
  for (size_t i = 0; i < c.rhs_dims.size(); ++i) c.sizes[c.rhs_dims[i]] = c.rhs_type.getDimSize(i);
  for (auto it : op.getIteratorTypesArray()) {
    c.is_reduction.push_back(it == mlir::vector::IteratorType::reduction);
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value result = buffers.allocate(b, loc, c.acc_type);
  llvm::SmallVector<Value> zeros(c.acc_type.getRank(), index_constant(b, loc, 0));
  copy_into(b, loc, buffers.get(op.getAcc()), c.acc_type.getShape(), c.element, result, zeros);
  Value lhs = buffers.get(op.getLhs());
  Value rhs = buffers.get(op.getRhs());

  int64_t acc_last = c.acc_dims.back();
  bool lhs_has = llvm::is_contained(c.lhs_dims, acc_last);
  bool rhs_has = llvm::is_contained(c.rhs_dims, acc_last);
  int64_t lhs_last = c.lhs_dims.back();
  if (rhs_has && !lhs_has && c.rhs_dims.back() == acc_last) {
    axpy(b, loc, c, lhs, rhs, result, acc_last, /*rows_from_rhs=*/true);
  } else if (lhs_has && !rhs_has && lhs_last == acc_last) {
    axpy(b, loc, c, lhs, rhs, result, acc_last, /*rows_from_rhs=*/false);
  } else if (c.is_reduction[lhs_last] && c.rhs_dims.back() == lhs_last) {
    dot(b, loc, c, lhs, rhs, result, lhs_last);
  } else {
    scalar_loops(b, loc, c, lhs, rhs, result);
  }
  buffers.bind(op.getResult(), result);
  return mlir::success();
}

}  // namespace

mlir::LogicalResult bufferize_contract_op(mlir::Operation* op, BufferMap& buffers, bool& handled) {
  handled = true;
  if (auto c = llvm::dyn_cast<mlir::vector::ContractionOp>(op)) return contract(c, buffers);
  handled = false;
  return mlir::success();
}

}  // namespace kgen::mosaic::buffers
