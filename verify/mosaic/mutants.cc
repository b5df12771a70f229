#include "mutants.h"

#include <functional>
#include <map>

#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mosaic_context.h"
#include "mosaic_error.h"

namespace kgen::mosaic {
namespace {

using Edit = std::function<void(mlir::Operation*)>;

struct Variant {
  std::string edit;
  Edit apply;
};

// Each op name and the neighbour it is swapped for; every pair has the same operand and
// result types.
const std::map<std::string, std::string>& op_swaps() {
  static const std::map<std::string, std::string> swaps = {
      {"arith.addf", "arith.subf"},         {"arith.subf", "arith.addf"},
      {"arith.mulf", "arith.divf"},         {"arith.divf", "arith.mulf"},
      {"arith.maximumf", "arith.minimumf"}, {"arith.minimumf", "arith.maximumf"},
      {"arith.maxnumf", "arith.minnumf"},   {"arith.minnumf", "arith.maxnumf"},
      {"arith.addi", "arith.subi"},         {"arith.subi", "arith.addi"},
      {"arith.muli", "arith.divsi"},        {"arith.divsi", "arith.muli"},
      {"arith.maxsi", "arith.minsi"},       {"arith.minsi", "arith.maxsi"},
      {"arith.andi", "arith.ori"},          {"arith.ori", "arith.andi"},
      {"math.exp", "math.exp2"},            {"math.exp2", "math.exp"},
      {"math.log", "math.log2"},            {"math.log2", "math.log"},
      {"math.tanh", "math.sin"},
  };
  return swaps;
}

// The same operands, result types and attributes under another name. Attributes inherent
// to the old op that the new one does not know (muli's overflow flags on divsi) are dropped.
void rename(mlir::Operation* op, const std::string& name) {
  mlir::OperationState state(op->getLoc(), name);
  state.addOperands(op->getOperands());
  state.addTypes(op->getResultTypes());
  const auto inherent = [](mlir::OperationName op_name, mlir::StringAttr attr) {
    for (mlir::StringAttr known : op_name.getAttributeNames())
      if (known == attr) return true;
    return false;
  };
  for (const mlir::NamedAttribute& attr : op->getAttrs())
    if (!inherent(op->getName(), attr.getName()) || inherent(state.name, attr.getName())) state.addAttribute(attr.getName(), attr.getValue());
  mlir::OpBuilder builder(op);
  mlir::Operation* replacement = builder.create(state);
  op->replaceAllUsesWith(replacement);
  op->erase();
}

mlir::arith::CmpIPredicate shifted(mlir::arith::CmpIPredicate p) {
  using P = mlir::arith::CmpIPredicate;
  switch (p) {
    case P::eq: return P::ne;
    case P::ne: return P::eq;
    case P::slt: return P::sle;
    case P::sle: return P::slt;
    case P::sgt: return P::sge;
    case P::sge: return P::sgt;
    case P::ult: return P::ule;
    case P::ule: return P::ult;
    case P::ugt: return P::uge;
    case P::uge: return P::ugt;
  }
  return p;
}

mlir::arith::CmpFPredicate shifted(mlir::arith::CmpFPredicate p) {
  using P = mlir::arith::CmpFPredicate;
  switch (p) {
    case P::OEQ: return P::ONE;
    case P::ONE: return P::OEQ;
    case P::UEQ: return P::UNE;
    case P::UNE: return P::UEQ;
    case P::OLT: return P::OLE;
    case P::OLE: return P::OLT;
    case P::OGT: return P::OGE;
    case P::OGE: return P::OGT;
    case P::ULT: return P::ULE;
    case P::ULE: return P::ULT;
    case P::UGT: return P::UGE;
    case P::UGE: return P::UGT;
    case P::ORD: return P::UNO;
    case P::UNO: return P::ORD;
    case P::AlwaysFalse: return P::AlwaysTrue;
    case P::AlwaysTrue: return P::AlwaysFalse;
  }
  return p;
}

// An integer constant's value moved by `delta` (a boolean is flipped instead): scalars
// and splats; other dense constants are left alone.
std::vector<Variant> constant_variants(mlir::arith::ConstantOp constant) {
  mlir::Attribute value = constant.getValue();
  llvm::APInt integer;
  mlir::ShapedType splat_type;
  if (auto scalar = mlir::dyn_cast<mlir::IntegerAttr>(value)) {
    integer = scalar.getValue();
  } else if (auto dense = mlir::dyn_cast<mlir::DenseIntElementsAttr>(value); dense && dense.isSplat()) {
    integer = dense.getSplatValue<llvm::APInt>();
    splat_type = dense.getType();
  } else {
    return {};
  }
  const mlir::Type element = splat_type ? splat_type.getElementType() : mlir::cast<mlir::TypedAttr>(value).getType();
  auto make = [=](llvm::APInt moved) -> Edit {
    return [=](mlir::Operation* op) {
      mlir::Attribute attr = splat_type ? mlir::Attribute(mlir::DenseElementsAttr::get(splat_type, moved))
                                        : mlir::Attribute(mlir::IntegerAttr::get(element, moved));
      mlir::cast<mlir::arith::ConstantOp>(op).setValueAttr(mlir::cast<mlir::TypedAttr>(attr));
    };
  };
  const bool is_signed = !element.isIndex() && integer.getBitWidth() > 1;
  const std::string old_text = is_signed ? std::to_string(integer.getSExtValue()) : std::to_string(integer.getZExtValue());
  if (integer.getBitWidth() == 1)
    return {{"constant " + old_text + " -> " + (integer.isZero() ? "1" : "0"), make(~integer)}};
  const llvm::APInt one(integer.getBitWidth(), 1);
  return {{"constant " + old_text + " -> " + std::to_string(integer.getSExtValue() + 1), make(integer + one)},
          {"constant " + old_text + " -> " + std::to_string(integer.getSExtValue() - 1), make(integer - one)}};
}

// Each value an index map returns, moved by +1 and -1.
std::vector<Variant> index_map_variants(mlir::func::ReturnOp ret) {
  std::vector<Variant> variants;
  for (unsigned k = 0; k < ret.getNumOperands(); ++k)
    for (int delta : {1, -1})
      variants.push_back({"index map result " + std::to_string(k) + (delta > 0 ? " +1" : " -1"), [=](mlir::Operation* op) {
                            mlir::OpBuilder builder(op);
                            mlir::Value value = op->getOperand(k);
                            mlir::Value offset = mlir::arith::ConstantOp::create(
                                builder, op->getLoc(), builder.getIntegerAttr(value.getType(), delta));
                            op->setOperand(k, mlir::arith::AddIOp::create(builder, op->getLoc(), value, offset));
                          }});
  return variants;
}

bool in_index_map(mlir::Operation* op) {
  auto func = op->getParentOfType<mlir::func::FuncOp>();
  return func && func.getSymName().starts_with("transform_");
}

std::vector<Variant> variants_of(mlir::Operation* op) {
  const std::string name = op->getName().getStringRef().str();
  if (auto swap = op_swaps().find(name); swap != op_swaps().end()) {
    const std::string to = swap->second;
    return {{name + " -> " + to, [to](mlir::Operation* o) { rename(o, to); }}};
  }
  if (auto cmp = mlir::dyn_cast<mlir::arith::CmpIOp>(op)) {
    const auto to = shifted(cmp.getPredicate());
    return {{"cmpi " + mlir::arith::stringifyCmpIPredicate(cmp.getPredicate()).str() + " -> " +
                 mlir::arith::stringifyCmpIPredicate(to).str(),
             [to](mlir::Operation* o) { mlir::cast<mlir::arith::CmpIOp>(o).setPredicate(to); }}};
  }
  if (auto cmp = mlir::dyn_cast<mlir::arith::CmpFOp>(op)) {
    const auto to = shifted(cmp.getPredicate());
    return {{"cmpf " + mlir::arith::stringifyCmpFPredicate(cmp.getPredicate()).str() + " -> " +
                 mlir::arith::stringifyCmpFPredicate(to).str(),
             [to](mlir::Operation* o) { mlir::cast<mlir::arith::CmpFOp>(o).setPredicate(to); }}};
  }
  if (mlir::isa<mlir::arith::SelectOp>(op))
    return {{"select values exchanged", [](mlir::Operation* o) {
               auto select = mlir::cast<mlir::arith::SelectOp>(o);
               mlir::Value on_true = select.getTrueValue();
               select->setOperand(1, select.getFalseValue());
               select->setOperand(2, on_true);
             }}};
  if (auto constant = mlir::dyn_cast<mlir::arith::ConstantOp>(op)) return constant_variants(constant);
  if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op); ret && in_index_map(op)) return index_map_variants(ret);
  return {};
}

int line_of(mlir::Operation* op) {
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(op->getLoc())) return static_cast<int>(file.getLine());
  return 0;
}

// Calls `visit(op, ordinal)` for every op in pre-order; stops when it returns true.
void walk_ops(mlir::ModuleOp module, const std::function<bool(mlir::Operation*, int64_t)>& visit) {
  int64_t ordinal = 0;
  module->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) {
    return visit(op, ordinal++) ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
}

// The executor's context, single-threaded: mutants are enumerated and applied in a process
// that later forks, and a fork must not inherit a thread pool.
std::unique_ptr<mlir::MLIRContext> single_threaded_context() {
  std::unique_ptr<mlir::MLIRContext> context = make_mosaic_context();
  context->disableMultithreading();
  return context;
}

}  // namespace

std::vector<Mutant> enumerate_mutants(std::string_view module_text, const std::string& source_name) {
  std::unique_ptr<mlir::MLIRContext> context = single_threaded_context();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse_mosaic_module(*context, module_text, source_name);
  std::vector<Mutant> mutants;
  walk_ops(*module, [&](mlir::Operation* op, int64_t ordinal) {
    const std::vector<Variant> variants = variants_of(op);
    for (std::size_t v = 0; v < variants.size(); ++v)
      mutants.push_back({ordinal, static_cast<int>(v), line_of(op), variants[v].edit});
    return false;
  });
  return mutants;
}

std::string apply_mutant(std::string_view module_text, const std::string& source_name, const Mutant& mutant) {
  std::unique_ptr<mlir::MLIRContext> context = single_threaded_context();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse_mosaic_module(*context, module_text, source_name);
  mlir::Operation* target = nullptr;
  walk_ops(*module, [&](mlir::Operation* op, int64_t ordinal) {
    if (ordinal == mutant.op_ordinal) target = op;
    return target != nullptr;
  });
  const std::vector<Variant> variants = target ? variants_of(target) : std::vector<Variant>{};
  if (mutant.variant >= static_cast<int>(variants.size()))
    throw MosaicError("no mutant " + mutant.edit + " at op " + std::to_string(mutant.op_ordinal));
  variants[static_cast<std::size_t>(mutant.variant)].apply(target);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().printGenericOpForm());
  return text;
}

}  // namespace kgen::mosaic
