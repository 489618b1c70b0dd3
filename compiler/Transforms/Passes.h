//===- Passes.h - sg graph-level passes -------------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_PASSES_H
#define SGC_COMPILER_TRANSFORMS_PASSES_H

#include "dialects/Plan/IR/PlanDialect.h"
#include "dialects/SG/IR/SGDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::sgc {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace mlir::sgc

#endif // SGC_COMPILER_TRANSFORMS_PASSES_H
