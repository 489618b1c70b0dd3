//===- Registration.cpp - everything sgc registers ------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Registration.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Plan/IR/PlanDialect.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::sgc::registerSgcDialects(DialectRegistry &registry) {
  registry.insert<sg::SGDialect, plan::PlanDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  vector::VectorDialect, LLVM::LLVMDialect>();
}

void mlir::sgc::registerSgcPasses() {
  registerSGTransformsPasses();
  registerSGConversionPasses();
  registerTransformsPasses();
  registerPhasePipelines();
}
