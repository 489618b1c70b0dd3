//===- FuseNormMatmul.cpp - RMSNorm into the linears that read it ---------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionPatterns.h"
#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSENORMMATMULPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

std::optional<SmallVector<sg::LinearOp>>
mlir::sgc::fusableLinears(sg::RMSNormOp norm) {
  if (norm.getType().getRank() != 2 || norm->use_empty())
    return std::nullopt;
  SmallVector<sg::LinearOp> linears;
  for (Operation *user : norm->getUsers()) {
    auto linear = dyn_cast<sg::LinearOp>(user);
    // sg.norm_linear takes plain [out, in] weights without a bias.
    if (!linear || !linear.isPlain() || linear.getX() != norm.getResult() ||
        linear->getBlock() != norm->getBlock())
      return std::nullopt;
    linears.push_back(linear);
  }
  llvm::sort(linears, [](sg::LinearOp a, sg::LinearOp b) {
    return a->isBeforeInBlock(b);
  });
  // The fused op replaces the last linear; every weight is defined before it
  // and no result of an earlier linear may be used before it.
  Operation *last = linears.back();
  for (sg::LinearOp linear : linears)
    for (Operation *user : linear->getUsers())
      if (user->getBlock() == last->getBlock() && user->isBeforeInBlock(last))
        return std::nullopt;
  return linears;
}

namespace {

/// An RMSNorm and its linear users -> one sg.norm_linear at the last linear.
struct FuseNormMatmul : OpRewritePattern<sg::RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(sg::RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<sg::LinearOp>> linears = fusableLinears(norm);
    if (!linears)
      return rewriter.notifyMatchFailure(norm, "not a norm of linears only");
    SmallVector<Value> weights;
    SmallVector<Type> types;
    SmallVector<Operation *> replaced = {norm};
    for (sg::LinearOp linear : *linears) {
      weights.push_back(linear.getW());
      types.push_back(linear.getType());
      replaced.push_back(linear);
    }
    rewriter.setInsertionPoint(linears->back());
    auto fused = sg::NormLinearOp::create(
        rewriter, fusedLoc(replaced), types, norm.getX(), norm.getWeight(),
        weights, norm.getEpsAttr(), norm.getWeightOffsetAttr(), FloatAttr());
    copyBlockTags(norm, fused);
    for (auto [linear, result] : llvm::zip_equal(*linears, fused.getResults()))
      rewriter.replaceOp(linear, result);
    rewriter.eraseOp(norm);
    return success();
  }
};

struct FuseNormMatmulPass
    : public sgc::impl::FuseNormMatmulPassBase<FuseNormMatmulPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateFuseNormMatmulPatterns(set);
    patterns = std::move(set);
    return success();
  }
  void runOnOperation() override {
    runAndReportFusion(getOperation(), "sg-fuse-norm-matmul", [&] {
      if (failed(applyFusionPatterns(getOperation(), patterns)))
        signalPassFailure();
    });
  }
  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::sgc::populateFuseNormMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseNormMatmul>(patterns.getContext());
}
