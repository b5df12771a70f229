#include "clang_pass.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

namespace kgen::audit {
namespace {

namespace fs = std::filesystem;
using namespace clang;

std::string normal_path(llvm::StringRef path) {
  return fs::path(path.str()).lexically_normal().generic_string();
}

std::string absolute_dir(const std::string& dir) {
  fs::path path = fs::absolute(fs::path(dir)).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path.generic_string();
}

// What one function contributes to the dynamic shared memory checks.
struct SharedUse {
  std::vector<std::pair<int64_t, std::pair<std::string, Location>>> casts;  // bytes, (type, where)
  std::optional<Location> unknown;
  std::set<const FunctionDecl*> callees;  // as pattern_of: whose uses are this function's too
};

// The state of one pass: where code is, what was found.
class PassState {
 public:
  PassState(ASTContext& ast, const AuditedCode& code, bool device, PassFacts& facts)
      : ast_(ast), audited_dir_(absolute_dir(code.folder)),
        audited_tree_(code.tree.empty() ? "" : absolute_dir(code.tree)), device_(device), facts_(facts),
        policy_(ast.getLangOpts()) {
    policy_.SuppressUnwrittenScope = true;  // no "(anonymous namespace)::"
    policy_.SuppressTagKeyword = true;
  }

  ASTContext& ast() { return ast_; }
  const PrintingPolicy& policy() const { return policy_; }
  bool device() const { return device_; }
  PassFacts& facts() { return facts_; }
  std::map<const FunctionDecl*, SharedUse>& shared_uses() { return shared_uses_; }

  Location where(SourceLocation loc) const {
    const SourceManager& sm = ast_.getSourceManager();
    if (loc.isInvalid()) return {};
    const PresumedLoc presumed = sm.getPresumedLoc(sm.getFileLoc(loc));
    if (presumed.isInvalid()) return {};
    return {normal_path(presumed.getFilename()), presumed.getLine()};
  }

  bool in_system_header(SourceLocation loc) const {
    return loc.isValid() && ast_.getSourceManager().isInSystemHeader(ast_.getSourceManager().getFileLoc(loc));
  }

  // Audited code: not a system header, and a file directly in the folder or anywhere below the
  // tree (the runtime the kernels include).
  bool audited(SourceLocation loc) {
    if (loc.isInvalid() || in_system_header(loc)) return false;
    const SourceManager& sm = ast_.getSourceManager();
    const FileID id = sm.getFileID(sm.getFileLoc(loc));
    auto [it, fresh] = audited_files_.try_emplace(id.getHashValue(), false);
    if (fresh) {
      const std::string name = sm.getFilename(sm.getFileLoc(loc)).str();
      const std::string parent = name.empty() ? "" : absolute_dir(fs::path(name).parent_path().string());
      it->second = !name.empty() && (parent == audited_dir_ ||
                                     (!audited_tree_.empty() && (parent == audited_tree_ ||
                                                                 parent.rfind(audited_tree_ + "/", 0) == 0)));
    }
    return it->second;
  }

  void report(SourceLocation loc, const char* rule, std::string message) {
    const Location at = where(loc);
    facts_.findings.push_back({at.file, at.line, rule, std::move(message)});
  }

  std::string source_text(SourceRange range) const {
    const SourceManager& sm = ast_.getSourceManager();
    const CharSourceRange chars = CharSourceRange::getTokenRange(
        sm.getFileLoc(range.getBegin()), sm.getFileLoc(range.getEnd()));
    std::string text = Lexer::getSourceText(chars, sm, ast_.getLangOpts()).str();
    std::string collapsed;
    for (char c : text) {
      const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
      if (space && (collapsed.empty() || collapsed.back() == ' ')) continue;
      collapsed += space ? ' ' : c;
    }
    if (collapsed.size() > 80) collapsed = collapsed.substr(0, 77) + "...";
    return collapsed;
  }

  std::string qualified_name(const NamedDecl* decl) const {
    std::string name;
    llvm::raw_string_ostream out(name);
    decl->printQualifiedName(out, policy_);
    return name;
  }

  std::string type_name(QualType type) const { return type.getAsString(policy_); }

 private:
  ASTContext& ast_;
  std::string audited_dir_;
  std::string audited_tree_;
  bool device_;
  PassFacts& facts_;
  PrintingPolicy policy_;
  std::map<unsigned, bool> audited_files_;
  std::map<const FunctionDecl*, SharedUse> shared_uses_;
};

// ---- Helpers on the AST

std::optional<int64_t> constant_int(const Expr* expr, const ASTContext& ast) {
  if (!expr || expr->isValueDependent() || expr->isTypeDependent()) return std::nullopt;
  if (!expr->getType()->isIntegralOrEnumerationType()) return std::nullopt;
  Expr::EvalResult result;
  if (!expr->EvaluateAsInt(result, ast)) return std::nullopt;
  return result.Val.getInt().getExtValue();
}

// A launch dimension as Clang's constant evaluator computes it: through dim3's constexpr
// constructor (`kThreads` converted to dim3, `dim3(a, b, 1)`, a `const dim3 grid(...)` built
// from constants and copied into the launch). nullopt when it is not a compile-time constant.
std::optional<Dim3> constant_dim3(const Expr* expr, const ASTContext& ast) {
  if (!expr || expr->isValueDependent() || expr->isTypeDependent()) return std::nullopt;
  const CXXRecordDecl* record = expr->getType()->getAsCXXRecordDecl();
  if (!record) return std::nullopt;
  Expr::EvalResult result;
  if (!expr->EvaluateAsRValue(result, ast) || result.HasSideEffects || !result.Val.isStruct()) return std::nullopt;
  Dim3 dims{};
  int found = 0;
  for (const FieldDecl* field : record->fields()) {
    const std::string name = field->getName().str();
    const int axis = name == "x" ? 0 : name == "y" ? 1 : name == "z" ? 2 : -1;
    const APValue& value = result.Val.getStructField(field->getFieldIndex());
    if (axis < 0 || !value.isInt()) return std::nullopt;
    dims[static_cast<std::size_t>(axis)] = value.getInt().getExtValue();
    ++found;
  }
  if (found != 3) return std::nullopt;
  return dims;
}

bool is_double(QualType type) {
  if (type.isNull() || type->isDependentType()) return false;
  const QualType canonical = type.getCanonicalType();
  return canonical->isSpecificBuiltinType(BuiltinType::Double) ||
         canonical->isSpecificBuiltinType(BuiltinType::LongDouble);
}

// An expression the compiler folds: no run-time work. Dependent code (a template pattern) is
// judged on its instantiations, so it counts as folded here.
bool folds(const Expr* expr, const ASTContext& ast) {
  if (expr->isValueDependent() || expr->isTypeDependent() || expr->containsErrors()) return true;
  return expr->isEvaluatable(ast);
}

// A class whose value is in its type (cute::C<N>, std::integral_constant): it has a constexpr
// static data member `value`.
bool is_integral_constant_class(QualType type, ASTContext& ast) {
  const CXXRecordDecl* record = type.isNull() ? nullptr : type->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition()) return false;
  for (const NamedDecl* member : record->lookup(&ast.Idents.get("value"))) {
    if (const auto* var = dyn_cast<VarDecl>(member); var && var->isStaticDataMember() && var->isConstexpr())
      return true;
  }
  return false;
}

using VarSet = std::set<const VarDecl*>;

// An expression whose value is known when the loops around it are fully unrolled: constants,
// constexpr variables, template parameters, integral-constant classes and the induction
// variables of enclosing fully unrolled loops, combined by operators and constexpr calls.
bool is_static(const Expr* expr, const VarSet& unrolled, ASTContext& ast) {
  if (!expr) return true;
  if (expr->isValueDependent() || expr->isTypeDependent()) return true;
  if (expr->isEvaluatable(ast)) return true;
  expr = expr->IgnoreParens();
  if (is_integral_constant_class(expr->getType(), ast)) return true;
  if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
    const ValueDecl* decl = ref->getDecl();
    if (const auto* var = dyn_cast<VarDecl>(decl)) return unrolled.count(var) || var->isUsableInConstantExpressions(ast);
    return isa<EnumConstantDecl, NonTypeTemplateParmDecl, FunctionDecl>(decl);
  }
  if (const auto* call = dyn_cast<CallExpr>(expr)) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (!callee || !callee->isConstexpr()) return false;
  }
  bool any = false;
  for (const Stmt* child : expr->children()) {
    if (!child) continue;
    const auto* sub = dyn_cast<Expr>(child);
    if (!sub || !is_static(sub, unrolled, ast)) return false;
    any = true;
  }
  return any;  // a leaf that does not fold (threadIdx, this, ...) is not static
}

// `new (pointer) T` constructs in place: no allocation.
bool allocates(const CXXNewExpr* expr) {
  const FunctionDecl* op = expr->getOperatorNew();
  return !(op && op->isReservedGlobalPlacementOperator());
}

const FunctionDecl* referenced_function(const Expr* expr) {
  if (!expr) return nullptr;
  expr = expr->IgnoreParenCasts();
  if (const auto* unary = dyn_cast<UnaryOperator>(expr); unary && unary->getOpcode() == UO_AddrOf)
    expr = unary->getSubExpr()->IgnoreParenCasts();
  if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) return dyn_cast<FunctionDecl>(ref->getDecl());
  return nullptr;
}

const VarDecl* referenced_variable(const Expr* expr) {
  if (!expr) return nullptr;
  expr = expr->IgnoreParenCasts();
  if (const auto* unary = dyn_cast<UnaryOperator>(expr); unary && unary->getOpcode() == UO_AddrOf)
    expr = unary->getSubExpr()->IgnoreParenCasts();
  if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) return dyn_cast<VarDecl>(ref->getDecl());
  return nullptr;
}

// The template a specialization comes from, so that every instantiation has one name.
const FunctionDecl* pattern_of(const FunctionDecl* function) {
  if (const FunctionTemplateDecl* primary = function->getPrimaryTemplate()) return primary->getTemplatedDecl();
  if (const FunctionDecl* pattern = function->getTemplateInstantiationPattern()) return pattern;
  return function;
}

// kgen::<symbol> for kernels under namespace kgen, else the outermost named namespace.
std::string family_of(const FunctionDecl* function) {
  std::vector<std::string> names;
  for (const DeclContext* context = function->getDeclContext(); context; context = context->getParent()) {
    if (const auto* ns = dyn_cast<NamespaceDecl>(context); ns && !ns->isAnonymousNamespace() && !ns->isInline())
      names.push_back(ns->getName().str());
  }
  std::reverse(names.begin(), names.end());
  if (names.size() >= 2 && names[0] == "kgen") return "kgen::" + names[1];
  if (!names.empty()) return names[0];
  return "(global namespace)";
}

bool explicit_device(const FunctionDecl* function) {
  if (function->hasAttr<CUDAGlobalAttr>()) return true;
  const auto* device = function->getAttr<CUDADeviceAttr>();
  return device && !device->isImplicit();
}

bool is_extern_shared_array(const VarDecl* var) {
  return var && var->hasAttr<CUDASharedAttr>() && var->getType()->isIncompleteArrayType();
}

// ---- Device code: the lint rules, and how the extern __shared__ buffer is used.
class DeviceBodyChecker : public RecursiveASTVisitor<DeviceBodyChecker> {
  using Base = RecursiveASTVisitor<DeviceBodyChecker>;

 public:
  DeviceBodyChecker(PassState& state, SharedUse& shared) : state_(state), shared_(shared) {}

  bool shouldVisitLambdaBody() const { return true; }

  // Compile-time contexts do no run-time work.
  bool TraverseStaticAssertDecl(StaticAssertDecl*) { return true; }
  bool TraverseConstantExpr(ConstantExpr*, DataRecursionQueue* = nullptr) { return true; }
  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr*, DataRecursionQueue* = nullptr) {
    return true;
  }
  bool TraverseVarDecl(VarDecl* var) {
    if (var->isConstexpr()) return true;
    return Base::TraverseVarDecl(var);
  }

  // A fully unrolled loop (#pragma unroll, CUTE_UNROLL) with static bounds: its induction
  // variables are constants in each unrolled copy of the body.
  // No data-recursion queue: the body must be traversed before the variables are dropped.
  bool TraverseAttributedStmt(AttributedStmt* stmt) {
    bool full_unroll = false;
    for (const Attr* attr : stmt->getAttrs()) {
      if (const auto* hint = dyn_cast<LoopHintAttr>(attr)) {
        if (hint->getOption() == LoopHintAttr::Unroll &&
            (hint->getState() == LoopHintAttr::Enable || hint->getState() == LoopHintAttr::Full))
          full_unroll = true;
      }
    }
    std::vector<const VarDecl*> added;
    if (const auto* loop = dyn_cast_or_null<ForStmt>(stmt->getSubStmt()); full_unroll && loop) {
      if (const auto* init = dyn_cast_or_null<DeclStmt>(loop->getInit())) {
        for (const Decl* decl : init->decls())
          if (const auto* var = dyn_cast<VarDecl>(decl); var && var->getType()->isIntegralOrEnumerationType())
            added.push_back(var);
      }
      for (const VarDecl* var : added) unrolled_.insert(var);
      bool bounded = is_static(loop->getCond(), unrolled_, state_.ast());
      for (const VarDecl* var : added) bounded = bounded && is_static(var->getInit(), unrolled_, state_.ast());
      if (!bounded) {
        for (const VarDecl* var : added) unrolled_.erase(var);
        added.clear();
      }
    }
    const bool result = Base::TraverseAttributedStmt(stmt);
    for (const VarDecl* var : added) unrolled_.erase(var);
    return result;
  }

  // local-array-dynamic-index
  bool VisitArraySubscriptExpr(ArraySubscriptExpr* subscript) {
    const Expr* base = subscript->getBase()->IgnoreParenImpCasts();
    while (const auto* inner = dyn_cast<ArraySubscriptExpr>(base)) base = inner->getBase()->IgnoreParenImpCasts();
    const VarDecl* array = local_array(base);
    if (!array || is_static(subscript->getIdx(), unrolled_, state_.ast())) return true;
    state_.report(subscript->getBeginLoc(), rule::kLocalArrayIndex,
                  "local array '" + array->getNameAsString() + "' is indexed by '" +
                      state_.source_text(subscript->getIdx()->getSourceRange()) +
                      "', not a compile-time constant: the array is placed in local memory. Index it "
                      "by constants or by the variable of a fully unrolled loop (#pragma unroll / "
                      "CUTE_UNROLL) with constant bounds.");
    return true;
  }

  // double-arithmetic
  bool VisitBinaryOperator(BinaryOperator* op) {
    if (!(op->isMultiplicativeOp() || op->isAdditiveOp() || op->isComparisonOp() || op->isCompoundAssignmentOp()))
      return true;
    QualType type = op->getLHS()->getType();
    if (const auto* compound = dyn_cast<CompoundAssignOperator>(op)) type = compound->getComputationLHSType();
    if (!is_double(type) && !is_double(op->getRHS()->getType())) return true;
    if (folds(op, state_.ast())) return true;
    state_.report(op->getOperatorLoc(), rule::kDoubleArithmetic,
                  "'" + op->getOpcodeStr().str() + "' computes in double precision in device code ('" +
                      state_.source_text(op->getSourceRange()) + "'); use float (a 'f' suffix on literals)");
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator* op) {
    if (!(op->isArithmeticOp() || op->isIncrementDecrementOp())) return true;
    if (!is_double(op->getType()) || folds(op, state_.ast())) return true;
    state_.report(op->getOperatorLoc(), rule::kDoubleArithmetic,
                  "'" + UnaryOperator::getOpcodeStr(op->getOpcode()).str() +
                      "' computes in double precision in device code ('" +
                      state_.source_text(op->getSourceRange()) + "')");
    return true;
  }

  bool VisitCastExpr(CastExpr* cast) {
    if (cast->getCastKind() != CK_FloatingCast && cast->getCastKind() != CK_IntegralToFloating) return true;
    const Expr* source = cast->getSubExpr();
    if (!is_double(cast->getType()) || is_double(source->getType()) || folds(source, state_.ast())) return true;
    state_.report(cast->getBeginLoc(), rule::kDoubleArithmetic,
                  "'" + state_.source_text(source->getSourceRange()) + "' (" + state_.type_name(source->getType()) +
                      ") is converted to double in device code");
    return true;
  }

  // double-math-call, device-printf, device-malloc
  bool VisitCallExpr(CallExpr* call) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (!callee) return true;
    shared_.callees.insert(pattern_of(callee));
    const std::string name = callee->getQualifiedNameAsString();
    static const std::set<std::string> kPrintf = {"printf", "std::printf", "vprintf", "fprintf", "std::fprintf",
                                                  "puts",   "std::puts"};
    static const std::set<std::string> kMalloc = {
        "malloc",  "std::malloc",   "calloc",        "std::calloc",       "realloc",
        "std::realloc", "free",      "std::free",     "aligned_alloc",     "std::aligned_alloc",
        "memalign", "__nv_aligned_device_malloc", "cudaMalloc", "cudaFree", "cudaMallocAsync",
        "cudaFreeAsync"};
    if (kPrintf.count(name) || name.rfind("cute::print", 0) == 0) {
      state_.report(call->getBeginLoc(), rule::kDevicePrintf,
                    "'" + name + "' in device code: device printf serializes threads and fills a host "
                    "buffer; generated kernels print nothing");
      return true;
    }
    if (kMalloc.count(name)) {
      state_.report(call->getBeginLoc(), rule::kDeviceMalloc,
                    "'" + name + "' in device code allocates from the device heap at run time; use "
                    "registers, shared memory, or buffers the launcher passes in");
      return true;
    }
    bool doubles = is_double(callee->getReturnType());
    for (const ParmVarDecl* param : callee->parameters()) doubles = doubles || is_double(param->getType());
    if (doubles && !folds(call, state_.ast())) {
      state_.report(call->getBeginLoc(), rule::kDoubleMathCall,
                    "call to '" + name + "' (" + state_.type_name(callee->getType()) +
                        ") computes in double precision in device code; call the float version "
                        "(e.g. expf, or the float overload)");
    }
    return true;
  }

  // device-new
  bool VisitCXXNewExpr(CXXNewExpr* expr) {
    if (allocates(expr))
      state_.report(expr->getBeginLoc(), rule::kDeviceNew,
                    "'new' in device code allocates from the device heap at run time");
    return true;
  }
  bool VisitCXXDeleteExpr(CXXDeleteExpr* expr) {
    state_.report(expr->getBeginLoc(), rule::kDeviceNew, "'delete' in device code (the device heap)");
    return true;
  }

  // The extern __shared__ buffer: cast to a storage type (its size is what is needed), or used
  // some other way (then the need is unknown).
  bool VisitExplicitCastExpr(ExplicitCastExpr* cast) {
    if (!cast->getType()->isPointerType()) return true;
    const QualType pointee = cast->getType()->getPointeeType();
    if (pointee->isVoidType() || pointee->isDependentType() || pointee->isIncompleteType() ||
        !pointee->isObjectType())
      return true;
    const Expr* source = cast->getSubExpr()->IgnoreParenImpCasts();
    while (const auto* inner = dyn_cast<ExplicitCastExpr>(source)) {
      if (!inner->getType()->isPointerType() || !inner->getType()->getPointeeType()->isVoidType()) break;
      source = inner->getSubExpr()->IgnoreParenImpCasts();
    }
    const auto* ref = dyn_cast<DeclRefExpr>(source);
    const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    if (!is_extern_shared_array(var)) return true;
    cast_refs_.insert(ref);
    const int64_t bytes = state_.ast().getTypeSizeInChars(pointee).getQuantity();
    shared_.casts.push_back({bytes, {state_.type_name(pointee), state_.where(cast->getBeginLoc())}});
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr* ref) {
    if (is_extern_shared_array(dyn_cast<VarDecl>(ref->getDecl()))) shared_refs_.push_back(ref);
    return true;
  }

  void finish() {
    for (const DeclRefExpr* ref : shared_refs_)
      if (!cast_refs_.count(ref) && !shared_.unknown) shared_.unknown = state_.where(ref->getBeginLoc());
  }

 private:
  // The local (register) array `base` names: a local variable of array type, a member array
  // of a local struct, or a reference bound to either. Shared and global arrays are not local.
  const VarDecl* local_array(const Expr* base) const {
    if (!base->getType()->isConstantArrayType()) return nullptr;
    const Expr* expr = base;
    while (const auto* member = dyn_cast<MemberExpr>(expr)) {
      if (member->isArrow()) return nullptr;
      expr = member->getBase()->IgnoreParenImpCasts();
    }
    const auto* ref = dyn_cast<DeclRefExpr>(expr);
    const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    if (!var || !var->hasLocalStorage() || var->hasAttr<CUDASharedAttr>()) return nullptr;
    if (var->getType()->isReferenceType()) {
      if (isa<ParmVarDecl>(var) || !var->getInit()) return nullptr;  // bound elsewhere: unknown
      return local_array(var->getInit()->IgnoreParenImpCasts()) ? var : nullptr;
    }
    return var;
  }

  PassState& state_;
  SharedUse& shared_;
  VarSet unrolled_;
  std::set<const DeclRefExpr*> cast_refs_;
  std::vector<const DeclRefExpr*> shared_refs_;
};

// ---- Launches, and cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, n),
// in any function of the audited files.
class LaunchScanner : public RecursiveASTVisitor<LaunchScanner> {
 public:
  explicit LaunchScanner(PassState& state) : state_(state) {}

  bool shouldVisitLambdaBody() const { return true; }

  // kernel<<<grid, block, bytes, stream>>>: the configuration is a call of
  // __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t bytes, stream).
  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr* call) {
    const FunctionDecl* kernel = call->getDirectCallee();
    const CallExpr* config = call->getConfig();
    if (!kernel || !config || config->getNumArgs() < 2) return true;
    LaunchFact& launch = add_launch(kernel, call->getBeginLoc(), "<<<>>>");
    launch.grid = constant_dim3(config->getArg(0), state_.ast());
    launch.block = constant_dim3(config->getArg(1), state_.ast());
    launch.smem_bytes = 0;  // <<<grid, block>>>: none
    if (config->getNumArgs() > 2) launch.smem_bytes = constant_int(config->getArg(2), state_.ast());
    return true;
  }

  bool VisitCallExpr(CallExpr* call) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (!callee || isa<CUDAKernelCallExpr>(call)) return true;
    const std::string name = callee->getNameAsString();
    if (name == "cudaLaunchKernel" && call->getNumArgs() >= 5) {
      // cudaLaunchKernel(kernel, grid, block, args, bytes, stream)
      if (const FunctionDecl* kernel = referenced_function(call->getArg(0))) {
        LaunchFact& launch = add_launch(kernel, call->getBeginLoc(), name);
        launch.grid = constant_dim3(call->getArg(1), state_.ast());
        launch.block = constant_dim3(call->getArg(2), state_.ast());
        launch.smem_bytes = constant_int(call->getArg(4), state_.ast());
      }
    } else if ((name == "cudaLaunchKernelEx" || name == "cudaLaunchKernelExC") && call->getNumArgs() >= 2) {
      // cudaLaunchKernelEx(&config, kernel, ...): the configuration is assigned to `config`'s
      // members in this function (finish() fills it in).
      if (const FunctionDecl* kernel = referenced_function(call->getArg(1))) {
        ex_launches_.push_back({referenced_variable(call->getArg(0)), state_.facts().launches.size()});
        add_launch(kernel, call->getBeginLoc(), name);
      }
    } else if (name == "cudaFuncSetAttribute" && call->getNumArgs() >= 3) {
      const auto* attribute = dyn_cast<DeclRefExpr>(call->getArg(1)->IgnoreParenImpCasts());
      const FunctionDecl* kernel = referenced_function(call->getArg(0));
      if (kernel && attribute && attribute->getDecl()->getName() == "cudaFuncAttributeMaxDynamicSharedMemorySize")
        state_.facts().smem_attributes.push_back({state_.qualified_name(pattern_of(kernel)),
                                                  state_.where(call->getBeginLoc()),
                                                  constant_int(call->getArg(2), state_.ast())});
    }
    return true;
  }

  // config.dynamicSmemBytes = n, for cudaLaunchKernelEx.
  bool VisitBinaryOperator(BinaryOperator* op) {
    if (op->getOpcode() == BO_Assign) assign_config(op->getLHS(), op->getRHS());
    return true;
  }

  // config.gridDim = grid, config.blockDim = block: dim3's (trivial) assignment operator.
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* call) {
    if (call->getOperator() == OO_Equal && call->getNumArgs() == 2) assign_config(call->getArg(0), call->getArg(1));
    return true;
  }

  void finish() {
    for (const auto& [config, index] : ex_launches_) {
      auto it = config ? configs_.find(config) : configs_.end();
      if (it == configs_.end()) continue;
      LaunchFact& launch = state_.facts().launches[index];
      launch.grid = it->second.grid;
      launch.block = it->second.block;
      launch.smem_bytes = it->second.smem_bytes;
    }
  }

 private:
  LaunchFact& add_launch(const FunctionDecl* kernel, SourceLocation loc, const std::string& how) {
    LaunchFact& launch = state_.facts().launches.emplace_back();
    launch.kernel = state_.qualified_name(pattern_of(kernel));
    launch.where = state_.where(loc);
    launch.how = how;
    return launch;
  }

  // `variable.member = value` where the member is one of cudaLaunchConfig_t's.
  void assign_config(const Expr* lhs, const Expr* rhs) {
    const auto* member = dyn_cast<MemberExpr>(lhs->IgnoreParenImpCasts());
    const VarDecl* config = member ? referenced_variable(member->getBase()) : nullptr;
    if (!config) return;
    const std::string name = member->getMemberDecl()->getName().str();
    LaunchFact& values = configs_[config];
    if (name == "gridDim") values.grid = constant_dim3(rhs, state_.ast());
    else if (name == "blockDim") values.block = constant_dim3(rhs, state_.ast());
    else if (name == "dynamicSmemBytes") values.smem_bytes = constant_int(rhs, state_.ast());
  }

  PassState& state_;
  std::vector<std::pair<const VarDecl*, std::size_t>> ex_launches_;
  std::map<const VarDecl*, LaunchFact> configs_;  // what each launch configuration was assigned
};

// ---- The translation unit: entry points, and every function of the audited files.
class TranslationUnitVisitor : public RecursiveASTVisitor<TranslationUnitVisitor> {
  using Base = RecursiveASTVisitor<TranslationUnitVisitor>;

 public:
  explicit TranslationUnitVisitor(PassState& state) : state_(state) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  // CUDA, CUTLASS and CuTe are system headers: nothing in them is examined.
  bool TraverseDecl(Decl* decl) {
    if (decl && !isa<TranslationUnitDecl>(decl) && state_.in_system_header(decl->getLocation())) return true;
    return Base::TraverseDecl(decl);
  }

  bool VisitFunctionDecl(FunctionDecl* function) {
    if (!function->doesThisDeclarationHaveABody() || !state_.audited(function->getLocation())) return true;
    if (const auto* method = dyn_cast<CXXMethodDecl>(function); method && method->getParent()->isLambda())
      return true;  // examined with the function that contains the lambda
    const bool kernel = function->hasAttr<CUDAGlobalAttr>();
    if (kernel && !function->isTemplateInstantiation()) record_kernel(function);
    LaunchScanner launches(state_);
    launches.TraverseStmt(function->getBody());
    launches.finish();
    // A template is examined in its instantiations, where types (the shared storage's among
    // them) are known; its pattern would only show dependent casts.
    if (state_.device() && explicit_device(function) && !function->isDependentContext()) {
      DeviceBodyChecker checker(state_, state_.shared_uses()[pattern_of(function)]);
      checker.TraverseStmt(function->getBody());
      checker.finish();
    }
    return true;
  }

  // Device lambdas in host code ([=] __device__ (...) { ... }).
  bool VisitLambdaExpr(LambdaExpr* lambda) {
    const CXXMethodDecl* call = lambda->getCallOperator();
    if (!state_.device() || !call || !state_.audited(lambda->getBeginLoc())) return true;
    const auto* device = call->getAttr<CUDADeviceAttr>();
    if (!device || device->isImplicit()) return true;
    DeviceBodyChecker checker(state_, state_.shared_uses()[call]);
    checker.TraverseStmt(lambda->getBody());
    checker.finish();
    return true;
  }

  // The dynamic shared memory each kernel needs: its own casts and those of the device
  // functions it calls, directly or through others (a file may hold several kernels, and only
  // some of them use the buffer).
  void finish() {
    for (KernelFact& kernel : state_.facts().kernels) {
      std::vector<const FunctionDecl*> pending;
      for (const auto& [function, use] : state_.shared_uses())
        if (function->hasAttr<CUDAGlobalAttr>() && state_.qualified_name(function) == kernel.name)
          pending.push_back(function);
      std::set<const FunctionDecl*> reached(pending.begin(), pending.end());
      while (!pending.empty()) {
        const auto found = state_.shared_uses().find(pending.back());
        pending.pop_back();
        if (found == state_.shared_uses().end()) continue;
        const SharedUse& use = found->second;
        for (const auto& [bytes, what] : use.casts) {
          if (!kernel.smem_need || bytes > *kernel.smem_need) {
            kernel.smem_need = bytes;
            kernel.smem_need_type = what.first;
            kernel.smem_need_where = what.second;
          }
        }
        if (use.unknown && !kernel.smem_unknown) kernel.smem_unknown = use.unknown;
        for (const FunctionDecl* callee : use.callees)
          if (reached.insert(callee).second) pending.push_back(callee);
      }
    }
  }

 private:
  void record_kernel(FunctionDecl* function) {
    KernelFact kernel;
    kernel.name = state_.qualified_name(function);
    kernel.family = family_of(function);
    kernel.where = state_.where(function->getLocation());
    kernel.is_template = function->getDescribedFunctionTemplate() != nullptr;
    for (const ParmVarDecl* param : function->parameters()) {
      const QualType type = param->getType();
      kernel.params.push_back({param->getNameAsString(), state_.type_name(type),
                               state_.type_name(type.getCanonicalType()), param->hasAttr<CUDAGridConstantAttr>(),
                               state_.where(param->getLocation())});
      if (!type->isDependentType() && type->isPointerType() && !type.isRestrictQualified())
        state_.report(param->getLocation(), rule::kRestrictPointer,
                      "pointer parameter '" + param->getNameAsString() + "' of kernel '" + kernel.name +
                          "' is not __restrict__ (" + state_.type_name(type) +
                          "): the compiler must assume it aliases the other pointers");
    }
    if (const auto* bounds = function->getAttr<CUDALaunchBoundsAttr>()) {
      kernel.has_launch_bounds = true;
      const ASTContext& ast = state_.ast();
      kernel.max_threads = constant_int(bounds->getMaxThreads(), ast);
      kernel.min_blocks = constant_int(bounds->getMinBlocks(), ast);
      kernel.max_blocks = constant_int(bounds->getMaxBlocks(), ast);
      kernel.launch_bounds_constant = kernel.max_threads.has_value() &&
                                      (!bounds->getMinBlocks() || kernel.min_blocks) &&
                                      (!bounds->getMaxBlocks() || kernel.max_blocks);
    }
    state_.facts().kernels.push_back(std::move(kernel));
  }

  PassState& state_;
};

class AuditConsumer : public ASTConsumer {
 public:
  AuditConsumer(AuditedCode code, bool device, PassFacts& facts)
      : code_(std::move(code)), device_(device), facts_(facts) {}

  void HandleTranslationUnit(ASTContext& ast) override {
    if (ast.getDiagnostics().hasErrorOccurred()) return;  // compile errors only: the AST is not whole
    PassState state(ast, code_, device_, facts_);
    TranslationUnitVisitor visitor(state);
    visitor.TraverseDecl(ast.getTranslationUnitDecl());
    visitor.finish();
    facts_.compiled = true;
  }

 private:
  AuditedCode code_;
  bool device_;
  PassFacts& facts_;
};

class AuditAction : public ASTFrontendAction {
 public:
  AuditAction(AuditedCode code, bool device, PassFacts& facts)
      : code_(std::move(code)), device_(device), facts_(facts) {}

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<AuditConsumer>(code_, device_, facts_);
  }

 private:
  AuditedCode code_;
  bool device_;
  PassFacts& facts_;
};

// Compile errors (and fatal ones) become findings at their location; warnings are not ours.
class ErrorCollector : public DiagnosticConsumer {
 public:
  ErrorCollector(PassFacts& facts, std::string main_file, bool device)
      : facts_(facts), main_file_(std::move(main_file)), pass_(device ? "device pass" : "host pass") {}

  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    Location at{main_file_, 1};
    if (info.getLocation().isValid() && info.hasSourceManager()) {
      const SourceManager& sm = info.getSourceManager();
      const PresumedLoc presumed = sm.getPresumedLoc(sm.getFileLoc(info.getLocation()));
      if (presumed.isValid()) at = {normal_path(presumed.getFilename()), presumed.getLine()};
    }
    facts_.findings.push_back({at.file, at.line, rule::kCompileError, pass_ + ": " + text.str().str()});
  }

 private:
  PassFacts& facts_;
  std::string main_file_;
  std::string pass_;
};

}  // namespace

PassFacts run_clang_pass(const std::vector<std::string>& command, const AuditedCode& code, bool device) {
  PassFacts facts;
  facts.device = device;
  llvm::IntrusiveRefCntPtr<FileManager> files(new FileManager(FileSystemOptions(), llvm::vfs::getRealFileSystem()));
  ErrorCollector errors(facts, normal_path(command.back()), device);
  tooling::ToolInvocation invocation(command, std::make_unique<AuditAction>(code, device, facts), files.get());
  invocation.setDiagnosticConsumer(&errors);
  invocation.run();
  if (!facts.compiled && std::none_of(facts.findings.begin(), facts.findings.end(), [](const Finding& finding) {
        return finding.rule == rule::kCompileError;
      }))
    facts.findings.push_back({normal_path(command.back()), 1, rule::kCompileError,
                              std::string(device ? "device" : "host") + " pass: clang did not parse the file"});
  return facts;
}

}  // namespace kgen::audit
