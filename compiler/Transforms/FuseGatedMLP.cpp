//===- FuseGatedMLP.cpp - gate/up, GELU-tanh and product in one op --------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionPatterns.h"
#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/IR/TypeUtilities.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSEGATEDMLPPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// `mul(gelu_tanh(g), u)` of one two-result sg.norm_linear -> sg.gated_mlp.
struct FuseGatedMLP : OpRewritePattern<sg::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(sg::MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (bool swapped : {false, true}) {
      Value lhs = swapped ? mul.getRhs() : mul.getLhs();
      Value rhs = swapped ? mul.getLhs() : mul.getRhs();
      auto gelu = lhs.getDefiningOp<sg::GeluTanhOp>();
      if (!gelu || !gelu->hasOneUse())
        continue;
      auto proj = gelu.getX().getDefiningOp<sg::NormLinearOp>();
      if (!proj || proj.getNumResults() != 2 || proj.getSoftcapAttr() ||
          proj.getResult(0) != gelu.getX() || proj.getResult(1) != rhs ||
          !proj.getResult(0).hasOneUse() || !proj.getResult(1).hasOneUse())
        continue;
      // One kernel reads both weights in one encoding: a file that stores
      // gate and up differently keeps them apart.
      if (getElementTypeOrSelf(proj.getWeights()[0].getType()) !=
          getElementTypeOrSelf(proj.getWeights()[1].getType()))
        continue;
      rewriter.setInsertionPoint(mul);
      auto fused = sg::GatedMLPOp::create(
          rewriter, fusedLoc({proj, gelu, mul}), mul.getType(), proj.getX(),
          proj.getNormWeight(), proj.getWeights()[0], proj.getWeights()[1],
          proj.getEpsAttr(), proj.getWeightOffsetAttr());
      copyBlockTags(mul, fused);
      rewriter.replaceOp(mul, fused.getResult());
      rewriter.eraseOp(gelu);
      rewriter.eraseOp(proj);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not gelu_tanh(g) * u of one "
                                            "norm_linear");
  }
};

struct FuseGatedMLPPass
    : public sgc::impl::FuseGatedMLPPassBase<FuseGatedMLPPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateFuseGatedMLPPatterns(set);
    patterns = std::move(set);
    return success();
  }
  void runOnOperation() override {
    runAndReportFusion(getOperation(), "sg-fuse-gated-mlp", [&] {
      if (failed(applyFusionPatterns(getOperation(), patterns)))
        signalPassFailure();
    });
  }
  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::sgc::populateFuseGatedMLPPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGatedMLP>(patterns.getContext());
}
