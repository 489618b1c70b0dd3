//===- FuseGatedMLP.cpp - gate/up, GELU-tanh and product in one op --------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSEGATEDMLPPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// Fuses `mul(gelu_tanh(g), u)`; false when it does not qualify.
bool fuse(sg::MulOp mul) {
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
    OpBuilder b(mul);
    auto fused = sg::GatedMLPOp::create(
        b, fusedLoc({proj, gelu, mul}), mul.getType(), proj.getX(),
        proj.getNormWeight(), proj.getWeights()[0], proj.getWeights()[1],
        proj.getEpsAttr(), proj.getWeightOffsetAttr());
    copyBlockTags(mul, fused);
    mul.getResult().replaceAllUsesWith(fused.getResult());
    mul.erase();
    gelu.erase();
    proj.erase();
    return true;
  }
  return false;
}

struct FuseGatedMLPPass
    : public sgc::impl::FuseGatedMLPPassBase<FuseGatedMLPPass> {
  void runOnOperation() override {
    SmallVector<sg::MulOp> muls;
    getOperation()->walk([&](sg::MulOp op) { muls.push_back(op); });
    runAndReportFusion(getOperation(), "sg-fuse-gated-mlp", [&] {
      for (sg::MulOp mul : muls)
        fuse(mul);
    });
  }
};

} // namespace
