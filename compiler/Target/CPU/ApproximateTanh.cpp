//===- ApproximateTanh.cpp - math.tanh as a rational approximation --------===//
//
// Part of sgc. libm's tanhf is a scalar call (through expm1f): on a vector
// of GELU inputs LLVM calls it once per lane, and a 512-token prefill of the
// B1 model spent a quarter of its time there. MLIR's f32 rational
// approximation of tanh is plain arithmetic that stays in vector registers.
// Scalar and vector tanh get the same expansion, so fused and unfused ops
// still compute the same bits.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/ApproximateTanh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

struct ApproximateTanhPass
    : PassWrapper<ApproximateTanhPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateTanhPass)

  StringRef getArgument() const override { return "sgc-approximate-tanh"; }
  StringRef getDescription() const override {
    return "Expand f32 math.tanh into MLIR's rational approximation";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, math::MathDialect,
                    vector::VectorDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::sgc::createApproximateTanhPass() {
  return std::make_unique<ApproximateTanhPass>();
}
