//===- FuseQKNormRope.cpp - per-head norm, RoPE and the cache write -------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionPatterns.h"
#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSEQKNORMROPEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// The one kv_write that stores `value` at `pos0` into a cache available at
/// `at`, if any.
sg::KVWriteOp findWrite(Value value, Value pos0, Operation *at) {
  sg::KVWriteOp found;
  for (Operation *user : value.getUsers()) {
    auto write = dyn_cast<sg::KVWriteOp>(user);
    if (!write || write.getValues() != value)
      continue;
    if (found)
      return {}; // two writes of one value: leave them alone
    found = write;
  }
  if (!found || found.getPos0() != pos0 || found->getBlock() != at->getBlock())
    return {};
  // The cache must exist where the fused op goes.
  Value cache = found.getCache();
  if (Operation *def = cache.getDefiningOp())
    if (def->getBlock() != at->getBlock() || !def->isBeforeInBlock(at))
      return {};
  return found;
}

/// Builds the fused op at `at` for norm `norm` (and the RoPE of `rope` when
/// given) and absorbs `write` when given.
void fuse(PatternRewriter &rewriter, sg::RMSNormOp norm, Operation *rope,
          Value pos0, sg::KVWriteOp write, Operation *at) {
  rewriter.setInsertionPoint(at);
  SmallVector<Operation *> replaced = {norm};
  FloatAttr theta, fraction;
  FloatAttr factor = rewriter.getF64FloatAttr(1.0);
  StringAttr basis;
  if (auto r = dyn_cast_or_null<sg::RopeOp>(rope)) {
    theta = r.getThetaAttr();
    factor = r.getFactorAttr();
  } else if (auto r = dyn_cast_or_null<sg::PartialRopeOp>(rope)) {
    theta = r.getThetaAttr();
    fraction = r.getRotaryFractionAttr();
    basis = r.getBasisAttr();
  }
  if (rope)
    replaced.push_back(rope);
  if (write)
    replaced.push_back(write);
  Type cacheType = write ? write.getType() : Type();
  auto fused = sg::NormRopeOp::create(
      rewriter, fusedLoc(replaced), norm.getType(), cacheType, norm.getX(),
      norm.getWeight(), pos0, write ? write.getCache() : Value(),
      norm.getEpsAttr(), norm.getWeightOffsetAttr(), theta, factor, fraction,
      basis, write ? write.getWindowAttr() : IntegerAttr());
  copyBlockTags(norm, fused);
  if (write)
    rewriter.replaceOp(write, fused.getNewCache());
  rewriter.replaceOp(rope ? rope : norm.getOperation(), fused.getResult());
  if (rope)
    rewriter.eraseOp(norm);
}

/// q and k: a per-head norm -> RoPE (-> the kv_write of k).
template <typename RopeOpT>
struct FuseNormRope : OpRewritePattern<RopeOpT> {
  using OpRewritePattern<RopeOpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeOpT rope,
                                PatternRewriter &rewriter) const override {
    auto norm = rope->getOperand(0).template getDefiningOp<sg::RMSNormOp>();
    if (!norm || !norm.getWeight() || norm.getType().getRank() != 3 ||
        !norm->hasOneUse() || norm->getBlock() != rope->getBlock())
      return rewriter.notifyMatchFailure(rope, "not of a per-head norm");
    Value pos0 = rope->getOperand(1);
    fuse(rewriter, norm, rope, pos0,
         findWrite(rope->getResult(0), pos0, rope), rope);
    return success();
  }
};

/// Gemma 4's weightless V norm -> its kv_write.
struct FuseValueNorm : OpRewritePattern<sg::RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(sg::RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    if (norm.getWeight() || norm.getType().getRank() != 3)
      return rewriter.notifyMatchFailure(norm, "not a weightless head norm");
    for (Operation *user : norm->getUsers())
      if (auto write = dyn_cast<sg::KVWriteOp>(user)) {
        sg::KVWriteOp found =
            findWrite(norm.getResult(), write.getPos0(), norm);
        if (!found)
          break;
        fuse(rewriter, norm, nullptr, found.getPos0(), found, norm);
        return success();
      }
    return rewriter.notifyMatchFailure(norm, "no cache write to absorb");
  }
};

struct FuseQKNormRopePass
    : public sgc::impl::FuseQKNormRopePassBase<FuseQKNormRopePass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateFuseQKNormRopePatterns(set);
    patterns = std::move(set);
    return success();
  }
  void runOnOperation() override {
    runAndReportFusion(getOperation(), "sg-fuse-qknorm-rope", [&] {
      if (failed(applyFusionPatterns(getOperation(), patterns)))
        signalPassFailure();
    });
  }
  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::sgc::populateFuseQKNormRopePatterns(RewritePatternSet &patterns) {
  patterns.add<FuseNormRope<sg::RopeOp>, FuseNormRope<sg::PartialRopeOp>,
               FuseValueNorm>(patterns.getContext());
}
