//===- ObjectEmitter.cpp - LLVM dialect -> object file per CPU variant ----===//
//
// Part of sgc. Translates the lowered module to LLVM IR, gives every symbol
// the variant's prefix (so several variants link into one library), defines
// the flags the kernels branch on for the variant's features, runs
// LLVM's O3 pipeline (without its loop unroller) for the variant's CPU and
// emits an object file in memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/HostLibrary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#include <mutex>
#include <thread>

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

/// Whether `variant` generates code with the LLVM feature `name`.
static bool hasFeature(const CPUVariant &variant, StringRef name) {
  SmallVector<StringRef> features;
  StringRef(variant.features).split(features, ',');
  return llvm::is_contained(features, ("+" + name).str());
}

/// The kernels' feature flags (compiler/Conversion/SGToCPU/Lowering.h):
/// internal constants, 1 where the variant has the features, so O3 keeps
/// only the paths the variant can run. bf16: the bf16 tiles and pair rows
/// (vdpbf16ps); int8: the int8 decode rows (512-bit vpdpbusd).
static constexpr llvm::StringLiteral kBf16DotFlag = "sgc_cpu_bf16_dot";
static constexpr llvm::StringLiteral kInt8DotFlag = "sgc_cpu_int8_dot";
/// Where the 4-bit decode rows prefetch: L1, except on AMD Zen (L2).
static constexpr llvm::StringLiteral kPrefetchToL1Flag =
    "sgc_cpu_prefetch_to_l1";

static void defineFeatureFlags(llvm::Module &module,
                               const CPUVariant &variant) {
  auto define = [&](StringRef name, bool on) {
    llvm::GlobalVariable *flag = module.getGlobalVariable(name);
    if (!flag)
      return;
    flag->setInitializer(
        llvm::ConstantInt::get(flag->getValueType(), on ? 1 : 0));
    flag->setConstant(true);
    flag->setLinkage(llvm::GlobalValue::InternalLinkage);
  };
  define(kBf16DotFlag, hasFeature(variant, "avx512bf16"));
  define(kInt8DotFlag, hasFeature(variant, "avx512vnni") &&
                           hasFeature(variant, "avx512bw"));
  define(kPrefetchToL1Flag, !StringRef(variant.cpu).starts_with("znver"));
}

/// Marks every loop of the kernels (functions sgc_*, named before a
/// variant's prefix goes on) so LLVM's loop vectorizer leaves it alone: MLIR
/// emitted them as vector code, and the vectorizer's analysis of them (and
/// of their scalar tails, which it vectorized for nothing) took ~25 % of a
/// CPU compile's CPU time (gemma-4-31B-it on znver4: 16.6-18.1 -> 13.9-15.0
/// s; the same B1 logits). The layer functions' scalar elementwise loops
/// keep it: B1 prefill ran 12 % slower with the vectorizer off everywhere.
static void skipKernelsInLoopVectorizer(llvm::Module &module) {
  for (llvm::Function &f : module) {
    if (f.isDeclaration() || !f.getName().starts_with("sgc_"))
      continue;
    llvm::DominatorTree dominators(f);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder())
      llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.enable", 0);
  }
}

/// `ir` as text (for --save-temps).
static std::string printed(const llvm::Module &ir) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ir.print(os, nullptr);
  return text;
}

namespace {
/// One variant on its way to an object file: its own LLVM context and module
/// (so variants optimize on separate threads) and the target machine.
struct VariantJob {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
  llvm::SmallVector<char, 0> object;
  bool emitted = false;
  /// The feature the variant lacks and yet its optimized code still uses
  /// (vdpbf16ps or vpdpbusd: a flag's branch did not fold): not emitted, it
  /// would not select. Null when none.
  const char *strayDot = nullptr;
};
} // namespace

/// Translates `module` to LLVM IR for `variant`: the part that reads MLIR,
/// run on the calling thread.
static LogicalResult translateVariant(ModuleOp module,
                                      const CPUVariant &variant,
                                      VariantJob &job) {
  OwningOpRef<ModuleOp> copy = stripForTranslation(module);
  job.context = std::make_unique<llvm::LLVMContext>();
  job.module = translateModuleToLLVMIR(*copy, *job.context, "sgc-model");
  if (!job.module)
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
  job.machine.reset(target->createTargetMachine(
      triple, variant.cpu, variant.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!job.machine)
    return emitError(module.getLoc(), "cannot create a target machine for '")
           << variant.cpu << "'";
  job.module->setDataLayout(job.machine->createDataLayout());
  job.module->setTargetTriple(triple);
  defineFeatureFlags(*job.module, variant);

  // Before the variant's prefix goes on: kernels are named sgc_*.
  skipKernelsInLoopVectorizer(*job.module);
  for (llvm::Function &f : *job.module) {
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", variant.cpu);
      if (!variant.features.empty())
        f.addFnAttr("target-features", variant.features);
    }
    if (isModelSymbol(f))
      f.setName(variant.prefix + f.getName().str());
  }
  return success();
}

/// LLVM's O3 for the variant's CPU, without its loop unroller, then code
/// generation: LLVM only, no MLIR and no diagnostics, so it may run on any
/// thread.
static void optimizeAndEmit(VariantJob &job) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The kernels leave MLIR unrolled as measured (4 accumulators along K per
  // weight row, 6 x 16 register tiles, 4 K steps a tile iteration). LLVM's
  // unroller on top of that doubled the object code and more than doubled
  // optimization + code generation (bench/README.md, B3).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder passBuilder(job.machine.get(), tuning);
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*job.module, mam);
  // vdpbf16ps and the vcvtneps2bf16 that feeds it dequantized weights;
  // vpdpbusd of the int8 rows.
  struct Needs {
    llvm::Intrinsic::ID id;
    const char *feature;
  };
  for (Needs needs :
       {Needs{llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, "+avx512bf16"},
        Needs{llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_512, "+avx512bf16"},
        Needs{llvm::Intrinsic::x86_avx512_vpdpbusd_512, "+avx512vnni"},
        Needs{llvm::Intrinsic::x86_avx512_vpdpwssd_512, "+avx512vnni"}})
    if (llvm::Function *used =
            llvm::Intrinsic::getDeclarationIfExists(job.module.get(), needs.id);
        used && !used->use_empty() &&
        !job.machine->getMCSubtargetInfo()->checkFeatures(needs.feature)) {
      job.strayDot = needs.feature + 1;
      return;
    }

  llvm::raw_svector_ostream os(job.object);
  llvm::legacy::PassManager codegen;
  if (job.machine->addPassesToEmitFile(codegen, os, nullptr,
                                       llvm::CodeGenFileType::ObjectFile))
    return;
  codegen.run(*job.module);
  job.emitted = true;
}

FailureOr<std::vector<std::string>>
mlir::sgc::emitCPUObjects(ModuleOp module, ArrayRef<CPUVariant> variants,
                          StringRef irDir) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);

  std::vector<VariantJob> jobs(variants.size());
  // Optimization and code generation are nearly all of a CPU compile's time
  // (bench/README.md, B3) and each variant's are independent: one thread per
  // variant, the last on this one. Each starts as soon as its variant is
  // translated (on this thread: translation reads MLIR), so the next
  // translation overlaps it.
  std::vector<std::thread> threads;
  auto joinAll = [&] {
    for (std::thread &thread : threads)
      thread.join();
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (failed(translateVariant(module, variants[i], jobs[i])) ||
        (!irDir.empty() &&
         writeFileIn(module.getLoc(), irDir, variants[i].prefix + "model.ll",
                     printed(*jobs[i].module))
             .empty())) {
      joinAll();
      return failure();
    }
    if (i + 1 < jobs.size())
      threads.emplace_back(optimizeAndEmit, std::ref(jobs[i]));
    else
      optimizeAndEmit(jobs[i]);
  }
  joinAll();

  std::vector<std::string> objects;
  for (auto [variant, job] : llvm::zip_equal(variants, jobs)) {
    if (job.strayDot)
      return emitError(module.getLoc(), "internal error: the code for '")
             << variant.cpu << "' still has dot products that need "
             << job.strayDot;
    if (!job.emitted)
      return emitError(module.getLoc(), "the target cannot emit object files "
                                        "for '")
             << variant.cpu << "'";
    objects.emplace_back(job.object.begin(), job.object.end());
  }
  return objects;
}

FailureOr<std::string> mlir::sgc::emitCPUObject(ModuleOp module,
                                               const CPUVariant &variant) {
  FailureOr<std::vector<std::string>> objects =
      emitCPUObjects(module, variant);
  if (failed(objects))
    return failure();
  return std::move(objects->front());
}
