//===- Passes.h - the targets' own passes -----------------------*- C++ -*-===//
//
// Part of sgc. Declared in Passes.td; defined in compiler/Target/CPU and
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

namespace mlir::sgc {

#define GEN_PASS_DECL
#include "compiler/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Target/Passes.h.inc"

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_PASSES_H
