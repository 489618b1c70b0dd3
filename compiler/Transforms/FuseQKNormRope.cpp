//===- FuseQKNormRope.cpp - per-head norm, RoPE and the cache write -------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

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
void fuse(sg::RMSNormOp norm, Operation *rope, Value pos0, sg::KVWriteOp write,
          Operation *at) {
  OpBuilder b(at);
  SmallVector<Operation *> replaced = {norm};
  FloatAttr theta, fraction;
  FloatAttr factor = b.getF64FloatAttr(1.0);
  StringAttr basis;
  Value result = norm.getResult();
  if (auto r = dyn_cast_or_null<sg::RopeOp>(rope)) {
    theta = r.getThetaAttr();
    factor = r.getFactorAttr();
    result = r.getResult();
  } else if (auto r = dyn_cast_or_null<sg::PartialRopeOp>(rope)) {
    theta = r.getThetaAttr();
    fraction = r.getRotaryFractionAttr();
    basis = r.getBasisAttr();
    result = r.getResult();
  }
  if (rope)
    replaced.push_back(rope);
  if (write)
    replaced.push_back(write);
  Type cacheType = write ? write.getType() : Type();
  auto fused = sg::NormRopeOp::create(
      b, fusedLoc(replaced), norm.getType(), cacheType, norm.getX(),
      norm.getWeight(), pos0, write ? write.getCache() : Value(),
      norm.getEpsAttr(), norm.getWeightOffsetAttr(), theta, factor, fraction,
      basis, write ? write.getWindowAttr() : IntegerAttr());
  copyBlockTags(norm, fused);
  if (write) {
    write.getResult().replaceAllUsesWith(fused.getNewCache());
    write.erase();
  }
  result.replaceAllUsesWith(fused.getResult());
  if (rope)
    rope->erase();
  norm.erase();
}

struct FuseQKNormRopePass
    : public sgc::impl::FuseQKNormRopePassBase<FuseQKNormRopePass> {
  void runOnOperation() override {
    runAndReportFusion(getOperation(), "sg-fuse-qknorm-rope", [&] {
      // q and k: norm -> rope (-> kv_write of k).
      SmallVector<Operation *> ropes;
      getOperation()->walk([&](Operation *op) {
        if (isa<sg::RopeOp, sg::PartialRopeOp>(op))
          ropes.push_back(op);
      });
      for (Operation *rope : ropes) {
        auto norm = rope->getOperand(0).getDefiningOp<sg::RMSNormOp>();
        if (!norm || !norm.getWeight() || norm.getType().getRank() != 3 ||
            !norm->hasOneUse() || norm->getBlock() != rope->getBlock())
          continue;
        Value pos0 = rope->getOperand(1);
        fuse(norm, rope, pos0, findWrite(rope->getResult(0), pos0, rope), rope);
      }
      // Gemma 4's weightless V norm -> kv_write.
      SmallVector<sg::RMSNormOp> norms;
      getOperation()->walk([&](sg::RMSNormOp op) {
        if (!op.getWeight() && op.getType().getRank() == 3)
          norms.push_back(op);
      });
      for (sg::RMSNormOp norm : norms) {
        for (Operation *user : norm->getUsers())
          if (auto write = dyn_cast<sg::KVWriteOp>(user)) {
            if (sg::KVWriteOp found =
                    findWrite(norm.getResult(), write.getPos0(), norm))
              fuse(norm, nullptr, found.getPos0(), found, norm);
            break;
          }
      }
    });
  }
};

} // namespace
