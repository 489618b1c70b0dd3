//===- Fuse.cpp - the four fusions as one pattern set ---------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionPatterns.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

void mlir::sgc::populateFusionPatterns(RewritePatternSet &patterns) {
  populateFuseNormMatmulPatterns(patterns);
  populateFuseQKNormRopePatterns(patterns);
  populateFuseGatedMLPPatterns(patterns);
  populateFuseSoftcapHeadPatterns(patterns);
}

LogicalResult
mlir::sgc::applyFusionPatterns(Operation *root,
                               const FrozenRewritePatternSet &patterns,
                               bool topDown) {
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(topDown)
      .enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return applyPatternsGreedily(root, patterns, config);
}

namespace {

struct FusePass : public sgc::impl::FusePassBase<FusePass> {
  using FusePassBase::FusePassBase;
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateFusionPatterns(set);
    patterns = std::move(set);
    return success();
  }
  void runOnOperation() override {
    if (failed(applyFusionPatterns(getOperation(), patterns, topDown)))
      signalPassFailure();
  }
  FrozenRewritePatternSet patterns;
};

} // namespace
