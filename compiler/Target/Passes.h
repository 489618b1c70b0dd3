//===- Passes.h - the targets' own passes -----------------------*- C++ -*-===//
//
// Part of sgc. Declared in Passes.td; defined in compiler/Target/Host and
// compiler/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_PASSES_H
#define SGC_COMPILER_TARGET_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::sgc {

#define GEN_PASS_DECL
#include "compiler/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Target/Passes.h.inc"

/// The greedy driver as a plain rewrite: no folding, no constant CSE, no
/// region simplification. The targets' expansion patterns need none of them
/// (the codegen pipeline ends with the canonicalizer), and over a whole
/// model they were most of a pass's time (gemma-4-31B-it:
/// sgc-expand-bf16-rounding 0.28 s, sgc-approximate-math 0.18 s).
inline GreedyRewriteConfig onlyRewrites() {
  return GreedyRewriteConfig()
      .enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
}

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_PASSES_H
