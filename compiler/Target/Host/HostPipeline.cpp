//===- HostPipeline.cpp - buffers and loops -> LLVM for the host ----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/HostPipeline.h"
#include "compiler/Target/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::sgc;

void mlir::sgc::buildHostCodegenPipeline(OpPassManager &pm, bool barePointers,
                                         bool perFunction) {
  // Passes that see one function at a time go under the functions when
  // `perFunction`: the context's threads then take the model's hundreds of
  // functions in parallel (they were ~55 % of the MLIR time of a compile).
  // The rest (declarations, symbols, globals) see the whole module.
  auto functionPasses = [&]() -> OpPassManager & {
    return perFunction ? pm.nest<func::FuncOp>() : pm;
  };
  // Buffers and loops -> LLVM dialect. Order matters (CPU.md §5.11):
  // strided metadata and affine go before arith-to-llvm; bf16 truncation
  // is expanded to integer code so no variant calls __truncsfbf2, first by
  // our own expansion for vectors (AVX2 keeps them in vectors), then
  // arith-expand for the scalars.
  OpPassManager &loops = functionPasses();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(memref::createExpandStridedMetadataPass());
  loops.addPass(createLowerAffinePass());
  // tanh, exp: arithmetic that vectorizes (libm's is a call per lane);
  // rsqrt, sqrt, sin, cos: LLVM intrinsics (libm calls at worst).
  loops.addPass(createApproximateMathPass());
  loops.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  OpPassManager &arith = functionPasses();
  arith.addPass(createSCFToControlFlowPass());
  arith.addPass(createExpandBf16RoundingPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  arith.addPass(arith::createArithExpandOpsPass(expand));
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.reassociateFPReductions = true;
  // x86vector.avx512.dot (the bf16 tiles of Linear.cpp) -> its intrinsic.
  vectorOptions.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = barePointers;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  auto llvmFunctionPasses = [&]() -> OpPassManager & {
    return perFunction ? pm.nest<LLVM::LLVMFuncOp>() : pm;
  };
  llvmFunctionPasses().addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  OpPassManager &last = llvmFunctionPasses();
  last.addPass(createConvertIndexToLLVMPass());
  last.addPass(createUBToLLVMConversionPass());
  last.addPass(createReconcileUnrealizedCastsPass());
  last.addPass(createCanonicalizerPass());
}
