// Structural checks of tpu ops. They reject what the lowering could not give a meaning
// to, with a message at the op's line:column, instead of miscomputing later.
#include <cstdint>
#include <vector>

#include "dialect/tpu_dialect.h"

namespace kgen::tpu {
namespace {

// Each dim of a rank-`rank` operand must be named exactly once across `groups`.
mlir::LogicalResult check_partition(mlir::Operation* op, llvm::StringRef operand, int64_t rank,
                                    std::initializer_list<llvm::ArrayRef<int64_t>> groups) {
  std::vector<bool> seen(rank, false);
  for (llvm::ArrayRef<int64_t> group : groups) {
    for (int64_t dim : group) {
      if (dim < 0 || dim >= rank) {
        return op->emitOpError() << operand << " dim " << dim << " is out of bounds";
      }
      if (seen[dim]) {
        return op->emitOpError() << operand << " dim " << dim << " is named twice";
      }
      seen[dim] = true;
    }
  }
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!seen[dim]) {
      return op->emitOpError() << operand << " dim " << dim << " is missing from dimension_numbers";
    }
  }
  return mlir::success();
}

mlir::LogicalResult check_indices(mlir::Operation* op, mlir::MemRefType base, mlir::VectorType vec,
                                  size_t num_indices, llvm::ArrayRef<int32_t> strides) {
  if (static_cast<int64_t>(num_indices) != base.getRank()) {
    return op->emitOpError() << "expects " << base.getRank() << " indices, got " << num_indices;
  }
  if (vec.getRank() > base.getRank()) {
    return op->emitOpError("vector rank exceeds memref rank");
  }
  if (!strides.empty() && static_cast<int64_t>(strides.size()) != base.getRank()) {
    return op->emitOpError("strides must be empty or one per memref dimension");
  }
  if (vec.getElementType() != base.getElementType()) {
    return op->emitOpError("vector and memref element types differ");
  }
  return mlir::success();
}

}  // namespace

mlir::LogicalResult MatmulOp::verify() {
  mlir::VectorType lhs = getLhs().getType();
  mlir::VectorType rhs = getRhs().getType();
  mlir::VectorType acc = getAcc().getType();
  if (acc != getResult().getType()) {
    return emitOpError("acc and result types differ");
  }
  if (!getDimensionNumbers()) {
    if (lhs.getRank() != 2 || rhs.getRank() != 2 || acc.getRank() != 2) {
      return emitOpError("without dimension_numbers, operands must be 2-D");
    }
    return mlir::success();
  }
  DotDimensionNumbersAttr dims = *getDimensionNumbers();
  if (dims.getLhsContractingDims().size() != dims.getRhsContractingDims().size()) {
    return emitOpError("lhs and rhs have different numbers of contracting dims");
  }
  if (dims.getLhsBatchDims().size() != dims.getRhsBatchDims().size()) {
    return emitOpError("lhs and rhs have different numbers of batch dims");
  }
  if (mlir::failed(check_partition(*this, "lhs", lhs.getRank(),
                                   {dims.getLhsContractingDims(), dims.getLhsNonContractingDims(),
                                    dims.getLhsBatchDims()})) ||
      mlir::failed(check_partition(*this, "rhs", rhs.getRank(),
                                   {dims.getRhsContractingDims(), dims.getRhsNonContractingDims(),
                                    dims.getRhsBatchDims()}))) {
    return mlir::failure();
  }
  for (size_t i = 0; i < dims.getLhsContractingDims().size(); ++i) {
    if (lhs.getDimSize(dims.getLhsContractingDims()[i]) !=
        rhs.getDimSize(dims.getRhsContractingDims()[i])) {
      return emitOpError("contracting dims differ in size");
    }
  }
  for (size_t i = 0; i < dims.getLhsBatchDims().size(); ++i) {
    if (lhs.getDimSize(dims.getLhsBatchDims()[i]) != rhs.getDimSize(dims.getRhsBatchDims()[i])) {
      return emitOpError("batch dims differ in size");
    }
  }
  llvm::ArrayRef<int64_t> order = dims.getOutputDimOrder();
  if (order.size() % 2 != 0 || static_cast<int64_t>(order.size() / 2) != acc.getRank()) {
    return emitOpError("output_dim_order must hold one (operand, dim) pair per acc dim");
  }
  for (size_t i = 0; i < order.size(); i += 2) {
    int64_t operand = order[i];
    int64_t dim = order[i + 1];
    if (operand != 0 && operand != 1) {
      return emitOpError("output_dim_order operand must be 0 (lhs) or 1 (rhs)");
    }
    mlir::VectorType source = operand == 0 ? lhs : rhs;
    llvm::ArrayRef<int64_t> contracting =
        operand == 0 ? dims.getLhsContractingDims() : dims.getRhsContractingDims();
    if (dim < 0 || dim >= source.getRank() || llvm::is_contained(contracting, dim)) {
      return emitOpError("output_dim_order names a dim that is not an output dim");
    }
    if (source.getDimSize(dim) != acc.getDimSize(i / 2)) {
      return emitOpError("output dim ") << i / 2 << " has size " << acc.getDimSize(i / 2)
                                        << " but operand dim has size " << source.getDimSize(dim);
    }
  }
  return mlir::success();
}

mlir::LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  std::vector<bool> seen(rank, false);
  for (int32_t dim : getDimensions()) {
    if (dim < 0 || dim >= rank) {
      return emitOpError("invalid dimension: ") << dim;
    }
    if (seen[dim]) {
      return emitOpError("dimensions must be unique");
    }
    seen[dim] = true;
  }
  return mlir::success();
}

mlir::LogicalResult VectorStoreOp::verify() {
  if (getMask() && getMask().getType().getShape() != getValueToStore().getType().getShape()) {
    return emitOpError("mask shape must equal the stored vector's shape");
  }
  return check_indices(*this, getBase().getType(), getValueToStore().getType(), getIndices().size(),
                       getStrides());
}

mlir::LogicalResult VectorLoadOp::verify() {
  if (getMask() && getMask().getType().getShape() != getResult().getType().getShape()) {
    return emitOpError("mask shape must equal the loaded vector's shape");
  }
  return check_indices(*this, getBase().getType(), getResult().getType(), getIndices().size(),
                       getStrides());
}

mlir::LogicalResult ConcatenateOp::verify() {
  mlir::VectorType out = getOutput().getType();
  int64_t dim = getDimension();
  if (getSources().empty()) {
    return emitOpError("needs at least one source");
  }
  if (dim < 0 || dim >= out.getRank()) {
    return emitOpError("dimension out of range");
  }
  int64_t total = 0;
  for (mlir::Value source : getSources()) {
    auto type = mlir::cast<mlir::VectorType>(source.getType());
    if (type.getRank() != out.getRank() || type.getElementType() != out.getElementType()) {
      return emitOpError("sources must match the result's rank and element type");
    }
    for (int64_t d = 0; d < out.getRank(); ++d) {
      if (d != dim && type.getDimSize(d) != out.getDimSize(d)) {
        return emitOpError("sources differ from the result outside the concat dimension");
      }
    }
    total += type.getDimSize(dim);
  }
  if (total != out.getDimSize(dim)) {
    return emitOpError("result size along the concat dimension is not the sum of sources'");
  }
  return mlir::success();
}

mlir::LogicalResult RepeatOp::verify() {
  mlir::VectorType in = getSource().getType();
  mlir::VectorType out = getOutput().getType();
  int64_t dim = getDimension();
  if (in.getRank() != out.getRank() || dim < 0 || dim >= in.getRank()) {
    return emitOpError("dimension out of range or rank mismatch");
  }
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t expected = d == dim ? in.getDimSize(d) * getTimes() : in.getDimSize(d);
    if (out.getDimSize(d) != expected) {
      return emitOpError("result shape is not the source repeated along the dimension");
    }
  }
  return mlir::success();
}

mlir::LogicalResult TransposeOp::verify() {
  auto in = mlir::cast<mlir::VectorType>(getVector().getType());
  auto out = mlir::cast<mlir::VectorType>(getResult().getType());
  llvm::ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank() || out.getRank() != in.getRank()) {
    return emitOpError("permutation must have one entry per dimension");
  }
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= in.getRank() || seen[perm[i]]) {
      return emitOpError("permutation is not a permutation");
    }
    seen[perm[i]] = true;
    if (out.getDimSize(i) != in.getDimSize(perm[i])) {
      return emitOpError("result shape does not match the permuted source");
    }
  }
  return mlir::success();
}

namespace {

bool is_semaphore_ref(mlir::Type type) {
  auto memref = llvm::dyn_cast<mlir::MemRefType>(type);
  return memref && memref.getRank() == 0 && llvm::isa<DMASemaphoreType>(memref.getElementType());
}

// A copy's two ends hold the same number of elements of one type.
mlir::LogicalResult check_copy_ends(mlir::Operation* op, mlir::Type from, mlir::Type to) {
  auto a = llvm::cast<mlir::MemRefType>(from);
  auto b = llvm::cast<mlir::MemRefType>(to);
  if (a.getElementType() != b.getElementType() || a.getShape() != b.getShape() || !a.hasStaticShape())
    return op->emitOpError("copies between memrefs of different static shapes or element types");
  return mlir::success();
}

}  // namespace

mlir::LogicalResult MemRefSliceOp::verify() {
  auto in = llvm::cast<mlir::MemRefType>(getMemRef().getType());
  auto out = llvm::cast<mlir::MemRefType>(getResult().getType());
  if (!getDynamicSizes().empty()) return emitOpError("dynamic sizes are not supported");
  if (static_cast<int64_t>(getBaseIdx().size()) != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("takes one index per dimension and keeps the rank");
  if (in.getElementType() != out.getElementType() || !out.hasStaticShape())
    return emitOpError("result must be a static slice of the same element type");
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (out.getDimSize(d) > in.getDimSize(d)) return emitOpError("slice is larger than its memref");
  return mlir::success();
}

mlir::LogicalResult MemRefSqueezeOp::verify() {
  auto in = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto out = llvm::cast<mlir::MemRefType>(getResult().getType());
  if (in.getElementType() != out.getElementType()) return emitOpError("changes the element type");
  // The result's dims, in order, with only size-1 dims of the input left out.
  size_t next = 0;
  for (int64_t size : in.getShape()) {
    if (next < static_cast<size_t>(out.getRank()) && out.getDimSize(next) == size) {
      ++next;
    } else if (size != 1) {
      return emitOpError("may only drop size-1 dimensions");
    }
  }
  if (next != static_cast<size_t>(out.getRank())) return emitOpError("result is not the input without size-1 dims");
  return mlir::success();
}

mlir::LogicalResult EnqueueDMAOp::verify() {
  if (getDeviceId() || getCoreId() || getSourceSemaphore())
    return emitOpError("remote and cross-core DMAs are not supported");
  if (!is_semaphore_ref(getTargetSemaphore().getType()))
    return emitOpError("target_semaphore must be a memref<!tpu.dma_semaphore>");
  return check_copy_ends(*this, getSource().getType(), getTarget().getType());
}

mlir::LogicalResult WaitDMA2Op::verify() {
  if (getDeviceId() || getCoreId()) return emitOpError("remote and cross-core DMAs are not supported");
  if (!is_semaphore_ref(getSemaphore().getType()))
    return emitOpError("semaphore must be a memref<!tpu.dma_semaphore>");
  return check_copy_ends(*this, getSrc().getType(), getDst().getType());
}

}  // namespace kgen::tpu
