//===- ObjectEmitter.cpp - LLVM dialect -> object file per CPU variant ----===//
//
// Part of sgc. Translates the lowered module to LLVM IR, gives every symbol
// the variant's prefix (so several variants link into one library), runs
// LLVM's O3 pipeline for the variant's CPU and emits an object file in
// memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPULibrary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

using namespace mlir;
using namespace mlir::sgc;

/// Whether `f` belongs to the model's own code (renamed per variant) rather
/// than to libc/libm or LLVM.
static bool isModelSymbol(const llvm::Function &f) {
  if (f.isIntrinsic())
    return false;
  if (!f.isDeclaration())
    return true;
  // Dispatchers are declared here and defined by the glue, once per variant.
  StringRef name = f.getName();
  return name.starts_with("sgc_dispatch_") ||
         name.starts_with("_mlir_ciface_sgc_dispatch_");
}

/// The module without what LLVM IR has no place for: the plan (ABI data,
/// serialized into the glue) and sg.* / plan.* attributes.
static OwningOpRef<ModuleOp> stripForTranslation(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  for (Operation &op : llvm::make_early_inc_range(*copy->getBody()))
    if (!isa<LLVM::LLVMDialect>(op.getDialect()))
      op.erase();
  copy->walk([](Operation *op) {
    SmallVector<StringAttr> drop;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (attr.getName().getValue().starts_with("sg.") ||
          attr.getName().getValue().starts_with("plan."))
        drop.push_back(attr.getName());
    for (StringAttr name : drop)
      op->removeDiscardableAttr(name);
  });
  return copy;
}

FailureOr<std::string> mlir::sgc::emitCPUObject(ModuleOp module,
                                               const CPUVariant &variant) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);

  OwningOpRef<ModuleOp> copy = stripForTranslation(module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*copy, llvmContext, "sgc-model");
  if (!llvmModule)
    return emitError(module.getLoc(), "cannot translate the model to LLVM IR");

  std::string tripleName = llvm::sys::getDefaultTargetTriple();
  llvm::Triple triple(tripleName);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(module.getLoc(), "no LLVM target for '")
           << tripleName << "': " << error;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, variant.cpu, variant.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return emitError(module.getLoc(), "cannot create a target machine for '")
           << variant.cpu << "'";
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  for (llvm::Function &f : *llvmModule) {
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", variant.cpu);
      if (!variant.features.empty())
        f.addFnAttr("target-features", variant.features);
    }
    if (isModelSymbol(f))
      f.setName(variant.prefix + f.getName().str());
  }

  // LLVM's O3 for the variant's CPU.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder passBuilder(machine.get());
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*llvmModule, mam);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return emitError(module.getLoc(), "the target cannot emit object files");
  codegen.run(*llvmModule);
  return std::string(buffer.begin(), buffer.end());
}
