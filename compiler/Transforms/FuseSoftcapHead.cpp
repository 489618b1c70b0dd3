//===- FuseSoftcapHead.cpp - the final softcap into the LM head -----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSESOFTCAPHEADPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// Folds `softcap` into the projection that feeds it; false when it does
/// not qualify.
bool fuse(sg::SoftcapOp softcap) {
  Operation *def = softcap.getX().getDefiningOp();
  if (!def || !softcap.getX().hasOneUse())
    return false;
  OpBuilder b(softcap);
  sg::NormLinearOp fused;
  if (auto proj = dyn_cast<sg::NormLinearOp>(def)) {
    if (proj.getNumResults() != 1 || proj.getSoftcapAttr())
      return false;
    fused = sg::NormLinearOp::create(
        b, fusedLoc({proj, softcap}), softcap.getType(), proj.getX(),
        proj.getNormWeight(), proj.getWeights(), proj.getEpsAttr(),
        proj.getWeightOffsetAttr(), softcap.getCapAttr());
  } else if (auto linear = dyn_cast<sg::LinearOp>(def)) {
    if (!linear.isPlain())
      return false;
    fused = sg::NormLinearOp::create(
        b, fusedLoc({linear, softcap}), softcap.getType(), linear.getX(),
        Value(), ValueRange{linear.getW()}, FloatAttr(),
        b.getI64IntegerAttr(0), softcap.getCapAttr());
  } else {
    return false;
  }
  copyBlockTags(softcap, fused);
  softcap.getResult().replaceAllUsesWith(fused.getResult(0));
  softcap.erase();
  def->erase();
  return true;
}

struct FuseSoftcapHeadPass
    : public sgc::impl::FuseSoftcapHeadPassBase<FuseSoftcapHeadPass> {
  void runOnOperation() override {
    SmallVector<sg::SoftcapOp> softcaps;
    getOperation()->walk([&](sg::SoftcapOp op) { softcaps.push_back(op); });
    runAndReportFusion(getOperation(), "sg-fuse-softcap-head", [&] {
      for (sg::SoftcapOp softcap : softcaps)
        fuse(softcap);
    });
  }
};

} // namespace
