//===- FuseSoftcapHead.cpp - the final softcap into the LM head -----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionPatterns.h"
#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSESOFTCAPHEADPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// `softcap` of the only use of a one-projection sg.norm_linear (or of a
/// plain sg.linear) -> that projection with a `softcap` attribute.
struct FuseSoftcapHead : OpRewritePattern<sg::SoftcapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(sg::SoftcapOp softcap,
                                PatternRewriter &rewriter) const override {
    Operation *def = softcap.getX().getDefiningOp();
    if (!def || !softcap.getX().hasOneUse())
      return rewriter.notifyMatchFailure(softcap, "input used elsewhere");
    rewriter.setInsertionPoint(softcap);
    sg::NormLinearOp fused;
    if (auto proj = dyn_cast<sg::NormLinearOp>(def)) {
      if (proj.getNumResults() != 1 || proj.getSoftcapAttr())
        return rewriter.notifyMatchFailure(softcap, "not one projection");
      fused = sg::NormLinearOp::create(
          rewriter, fusedLoc({proj, softcap}), softcap.getType(), proj.getX(),
          proj.getNormWeight(), proj.getWeights(), proj.getEpsAttr(),
          proj.getWeightOffsetAttr(), softcap.getCapAttr());
    } else if (auto linear = dyn_cast<sg::LinearOp>(def)) {
      if (!linear.isPlain())
        return rewriter.notifyMatchFailure(softcap, "not a plain linear");
      // A norm the norm fusion takes into this linear goes first, so the
      // head ends the same whichever fusion fires first.
      if (auto norm = linear.getX().getDefiningOp<sg::RMSNormOp>())
        if (fusableLinears(norm))
          return rewriter.notifyMatchFailure(softcap, "norm fusion first");
      fused = sg::NormLinearOp::create(
          rewriter, fusedLoc({linear, softcap}), softcap.getType(),
          linear.getX(), Value(), ValueRange{linear.getW()}, FloatAttr(),
          rewriter.getI64IntegerAttr(0), softcap.getCapAttr());
    } else {
      return rewriter.notifyMatchFailure(softcap, "no projection");
    }
    copyBlockTags(softcap, fused);
    rewriter.replaceOp(softcap, fused.getResult(0));
    rewriter.eraseOp(def);
    return success();
  }
};

struct FuseSoftcapHeadPass
    : public sgc::impl::FuseSoftcapHeadPassBase<FuseSoftcapHeadPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateFuseSoftcapHeadPatterns(set);
    patterns = std::move(set);
    return success();
  }
  void runOnOperation() override {
    runAndReportFusion(getOperation(), "sg-fuse-softcap-head", [&] {
      if (failed(applyFusionPatterns(getOperation(), patterns)))
        signalPassFailure();
    });
  }
  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::sgc::populateFuseSoftcapHeadPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseSoftcapHead>(patterns.getContext());
}
