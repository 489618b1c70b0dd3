//===- FuseNormMatmul.cpp - RMSNorm into the linears that read it ---------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_FUSENORMMATMULPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// Fuses `norm` into its linear users; false when it does not qualify.
bool fuse(sg::RMSNormOp norm) {
  if (norm.getType().getRank() != 2 || norm->use_empty())
    return false;
  SmallVector<sg::LinearOp> linears;
  for (Operation *user : norm->getUsers()) {
    auto linear = dyn_cast<sg::LinearOp>(user);
    // sg.norm_linear takes plain [out, in] weights without a bias.
    if (!linear || !linear.isPlain() || linear.getX() != norm.getResult() ||
        linear->getBlock() != norm->getBlock())
      return false;
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
        return false;

  OpBuilder b(last);
  SmallVector<Value> weights;
  SmallVector<Type> types;
  SmallVector<Operation *> replaced = {norm};
  for (sg::LinearOp linear : linears) {
    weights.push_back(linear.getW());
    types.push_back(linear.getType());
    replaced.push_back(linear);
  }
  auto fused = sg::NormLinearOp::create(
      b, fusedLoc(replaced), types, norm.getX(), norm.getWeight(), weights,
      norm.getEpsAttr(), norm.getWeightOffsetAttr(), FloatAttr());
  copyBlockTags(norm, fused);
  for (auto [linear, result] : llvm::zip_equal(linears, fused.getResults()))
    linear.getResult().replaceAllUsesWith(result);
  for (sg::LinearOp linear : linears)
    linear.erase();
  norm.erase();
  return true;
}

struct FuseNormMatmulPass
    : public sgc::impl::FuseNormMatmulPassBase<FuseNormMatmulPass> {
  void runOnOperation() override {
    SmallVector<sg::RMSNormOp> norms;
    getOperation()->walk([&](sg::RMSNormOp op) { norms.push_back(op); });
    runAndReportFusion(getOperation(), "sg-fuse-norm-matmul", [&] {
      for (sg::RMSNormOp norm : norms)
        fuse(norm);
    });
  }
};

} // namespace
