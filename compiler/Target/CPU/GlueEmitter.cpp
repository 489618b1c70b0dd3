//===- GlueEmitter.cpp - the C glue of a compiled CPU model ---------------===//
//
// Part of sgc. Generates one C file: the ABI tables of the plan (written by
// the PlanSerializer, shared by every target) and, per CPU variant, what the
// runtime's replay engine calls: one function per plan callee that unpacks
// the step's operands into the lowered body's C interface, and the
// dispatchers that spread each kernel's rows over the runtime's threads. The
// glue has no plan interpreter and no global state: the steps are ABI data.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "compiler/Target/ABI/PlanSerializer.h"
#include "compiler/Target/CPU/CPULibrary.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sgc;

namespace {

const char *const kAbiHeader =
#include "compiler/Target/ABI/AbiHeader.inc"
    ;

/// The model-independent part: the row dispatcher.
const char *const kPrelude = R"c(
#include <stdint.h>

/* Runs rows [0, rows) of a kernel, split over the runtime's threads;
   `range` calls the kernel on a row range with the arguments in `args`. */
static void sgc_run_rows(const sgc_abi_cpu_exec_t *exec, int64_t rows,
                         int64_t parallel_rows, sgc_abi_range_fn_t range,
                         void **args) {
  if (exec->num_threads > 1 && rows >= parallel_rows)
    exec->parallel_for(exec->runtime_state, rows, range, args);
  else
    range(args, 0, rows);
}
)c";

/// SGC_ABI_OPERAND_POSITION (abi.h): passed by value.
constexpr unsigned kPositionOperand = 1;

class Glue {
public:
  Glue(ModuleOp module, const PlanSerializer &plan,
       ArrayRef<CPUVariant> variants, llvm::raw_ostream &os)
      : module(module), plan(plan), variants(variants), os(os) {}

  LogicalResult emit();

private:
  LogicalResult checkFunctions();
  void emitVariant(const CPUVariant &variant);

  ModuleOp module;
  const PlanSerializer &plan;
  ArrayRef<CPUVariant> variants;
  llvm::raw_ostream &os;
};

/// Each plan function must be a lowered body whose C interface takes the
/// execution context and then exactly the step's operands.
LogicalResult Glue::checkFunctions() {
  for (const PlanFunction &fn : plan.functions()) {
    auto func = module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" + fn.name);
    if (!func || func.isExternal())
      return emitError(module.getLoc(), "emit: no lowered body '")
             << fn.name << "' for a step of the plan";
    ArrayRef<Type> params = func.getFunctionType().getParams();
    if (params.size() != 1 + fn.operandKinds.size())
      return emitError(module.getLoc(), "emit: the plan passes ")
             << fn.operandKinds.size() << " operands to '" << fn.name
             << "', which takes " << params.size() - 1;
    for (auto [kind, type] : llvm::zip_equal(fn.operandKinds, params.drop_front()))
      if ((kind == kPositionOperand) != type.isInteger(64))
        return emitError(module.getLoc(), "emit: operand kinds of '")
               << fn.name << "' do not match its parameters";
  }
  return success();
}

void Glue::emitVariant(const CPUVariant &variant) {
  os << "#define SGC_V(name) " << variant.prefix << "##name\n";
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    StringRef name = func.getName();
    if (!name.starts_with("_mlir_ciface_"))
      continue;
    unsigned n = func.getFunctionType().getNumParams();
    if (func.isExternal()) {
      MLIRContext *ctx = func.getContext();
      auto kernel = sg::SGDialect::DispatchAttrHelper(ctx).getAttr(func);
      auto rows = sg::SGDialect::RowsAttrHelper(ctx).getAttr(func);
      if (!kernel || !rows)
        continue;
      // The dispatcher takes the execution context and the kernel's
      // buffers; the kernel takes the buffers and a row range.
      unsigned buffers = n - 1;
      os << "extern void SGC_V(_mlir_ciface_" << kernel.getValue() << ")(";
      for (unsigned i = 0; i < buffers; ++i)
        os << "void *, ";
      os << "int64_t, int64_t);\n"
         << "static void SGC_V(range_" << kernel.getValue()
         << ")(void *ctx, int64_t begin, int64_t end) {\n"
         << "  void **a = (void **)ctx;\n  SGC_V(_mlir_ciface_"
         << kernel.getValue() << ")(";
      for (unsigned i = 0; i < buffers; ++i)
        os << "a[" << i << "], ";
      os << "begin, end);\n}\nvoid SGC_V(" << name << ")(void *exec";
      for (unsigned i = 0; i < buffers; ++i)
        os << ", void *a" << i;
      os << ") {\n  void *args[] = {";
      for (unsigned i = 0; i < buffers; ++i)
        os << (i ? ", " : "") << "a" << i;
      auto parallel = sg::SGDialect::ParallelRowsAttrHelper(ctx).getAttr(func);
      os << "};\n  sgc_run_rows((const sgc_abi_cpu_exec_t *)exec, "
         << rows.getInt() << ", " << (parallel ? parallel.getInt() : 64)
         << ", SGC_V(range_" << kernel.getValue()
         << "), args);\n}\n";
      continue;
    }
    std::string params;
    for (Type t : func.getFunctionType().getParams())
      params += std::string(params.empty() ? "" : ", ") +
                (isa<LLVM::LLVMPointerType>(t) ? "void *" : "int64_t");
    os << "extern void SGC_V(" << name << ")(" << params << ");\n";
  }
  // One function per callee: the step's operands into the C interface.
  for (auto [index, fn] : llvm::enumerate(plan.functions())) {
    os << "static void SGC_V(fn" << index
       << ")(const sgc_abi_cpu_exec_t *exec, void *const *a) {\n"
       << "  SGC_V(_mlir_ciface_" << fn.name << ")((void *)exec";
    for (auto [i, kind] : llvm::enumerate(fn.operandKinds))
      os << ", "
         << (kind == kPositionOperand ? "*(const int64_t *)a[" : "a[") << i
         << "]";
    os << ");\n}\n";
  }
  os << "static const sgc_abi_cpu_fn_t SGC_V(functions)[] = {";
  for (size_t i = 0; i < plan.functions().size(); ++i)
    os << (i ? ", " : "") << "SGC_V(fn" << i << ")";
  os << "};\n#undef SGC_V\n\n";
}

LogicalResult Glue::emit() {
  if (failed(checkFunctions()))
    return failure();
  os << "/* Generated by sgc: the ABI tables and CPU functions of one "
        "compiled model. */\n"
     << kAbiHeader << "\n"
     << kPrelude << "\n";
  plan.writeTables(os);
  for (const CPUVariant &variant : variants)
    emitVariant(variant);
  os << "static const sgc_abi_variant_t sgc_variants[] = {\n";
  for (const CPUVariant &variant : variants)
    os << "  {" << PlanSerializer::cString(variant.name)
       << ", SGC_ABI_DEVICE_CPU, " << plan.functions().size() << ", "
       << variant.requiredFeatures << "ull, " << variant.prefix
       << "functions, 0, 0, 0},\n";
  os << "};\n\n";
  // Read by the bf16 pair rows of every variant, set by the runtime for its
  // host (sgc/abi.h).
  os << "SGC_ABI_EXPORT int64_t " << lowering::kRowPrefetchGlobal << " = "
     << lowering::kDefaultRowPrefetchBytes << ";\n";
  // Read by the bf16 tiles of the AVX512-BF16 variants, likewise.
  os << "SGC_ABI_EXPORT int64_t " << lowering::kBf16OnFmaGlobal << " = 0;\n\n";
  plan.writeModel(os, "cpu", "SGC_ABI_DEVICE_CPU", "sgc_variants",
                  variants.size());
  return success();
}

} // namespace

FailureOr<std::string> mlir::sgc::emitCPUGlue(ModuleOp module,
                                             ArrayRef<CPUVariant> variants) {
  FailureOr<PlanSerializer> plan = PlanSerializer::read(module);
  if (failed(plan))
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(Glue(module, *plan, variants, os).emit()))
    return failure();
  return text;
}
