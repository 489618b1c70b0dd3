//===- Registration.cpp - everything sgc registers ------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Registration.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::sgc::registerSgcDialects(DialectRegistry &registry) {
  registry.insert<sg::SGDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
}

void mlir::sgc::registerSgcPasses() {
  registerSGTransformsPasses();
  registerTransformsPasses();
  registerPhasePipelines();
}
