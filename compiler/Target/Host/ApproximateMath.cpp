//===- ApproximateMath.cpp - math.tanh and math.exp as arithmetic ---------===//
//
// Part of sgc. libm's tanhf and expf are scalar calls: on a vector of GELU
// inputs LLVM calls tanhf once per lane (a 512-token prefill of the B1
// model spent a quarter of its time there), and the softmax's exponentials
// were one call a key. MLIR's f32 approximations (a rational one for tanh;
// Cephes' range reduction and polynomial for exp, relative error < 2^-22.5,
// denormal results flushed to 0, so exp(-inf) is ~1e-38 rather than 0: the
// kernels set a masked key's weight to 0 explicitly) are plain arithmetic
// that stays in vector registers. Scalar and vector ops get the same
// expansion, so fused and unfused ops still compute the same bits.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "compiler/Target/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;

namespace {

struct ApproximateMathPass
    : public sgc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    // The predicate sees the op's name ("math.exp").
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      name.consume_front("math.");
      return name == "exp";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sgc::onlyRewrites())))
      signalPassFailure();
  }
};

} // namespace
