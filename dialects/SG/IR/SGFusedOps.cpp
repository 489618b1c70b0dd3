//===- SGFusedOps.cpp - verifiers of the fused sg ops ----------------------===//
//
// Part of sgc. The ops the fusion passes make (SGFusedOps.td); tags as in
// SGOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGOps.h"
#include "dialects/SG/IR/VerifyHelpers.h"

using namespace mlir;
using mlir::sgc::shapeStr;
using namespace mlir::sgc::sg;

//===----------------------------------------------------------------------===//
// NormLinearOp, GatedMLPOp
//===----------------------------------------------------------------------===//

/// The norm part shared by the fused ops (their c3/c2 and c4).
static LogicalResult verifyFusedNorm(Operation *op, FloatAttr eps,
                                     int64_t offset, Value normWeight,
                                     int64_t width) {
  if (!eps) {
    if (normWeight || offset != 0)
      return op->emitOpError("without 'eps' takes no norm weight and "
                             "'weight_offset' 0");
    return success();
  }
  if (!isPositiveFinite(eps.getValueAsDouble()))
    return op->emitOpError("requires 'eps' > 0, got ")
           << num(eps.getValueAsDouble());
  if (offset != 0 && offset != 1)
    return op->emitOpError("requires 'weight_offset' 0 or 1, got ") << offset;
  if (normWeight) {
    RankedTensorType w = rankedType(normWeight);
    if (w.getRank() != 1 || dimsConflict(w.getDimSize(0), width))
      return op->emitOpError("requires a norm weight of shape [")
             << width << "], got " << shapeStr(w.getShape());
  } else if (offset != 0) {
    return op->emitOpError("without a norm weight requires 'weight_offset' "
                           "0, got ")
           << offset;
  }
  return success();
}

/// `w` is [out, width] and `result` is [tokens-of-x, out].
static LogicalResult verifyProjection(Operation *op, RankedTensorType x,
                                      Value w, Value result) {
  RankedTensorType wt = rankedType(w), rt = rankedType(result);
  if (wt.getRank() != 2 || dimsConflict(wt.getDimSize(1), x.getDimSize(1)))
    return op->emitOpError("requires weights of shape [out, ")
           << x.getDimSize(1) << "], got " << shapeStr(wt.getShape());
  if (failed(verifyBlockWeight(op, wt)))
    return failure();
  SmallVector<int64_t> expected = {x.getDimSize(0), wt.getDimSize(0)};
  if (shapesConflict(rt.getShape(), expected))
    return op->emitOpError("requires result shape ")
           << shapeStr(expected) << ", got " << shapeStr(rt.getShape());
  return success();
}

LogicalResult NormLinearOp::verify() {
  // norm_linear_c1
  if (getWeights().empty() || getWeights().size() != getResults().size())
    return emitOpError("requires one result per weight and at least one "
                       "weight, got ")
           << getWeights().size() << " weights and " << getResults().size()
           << " results";
  // norm_linear_c2
  RankedTensorType x = getX().getType();
  if (x.getRank() != 2)
    return emitOpError("requires a [tokens, in] input, got rank ")
           << x.getRank();
  for (auto [w, r] : llvm::zip_equal(getWeights(), getResults()))
    if (failed(verifyProjection(*this, x, w, r)))
      return failure();
  // norm_linear_c3, norm_linear_c4
  if (failed(verifyFusedNorm(*this, getEpsAttr(), getWeightOffset(),
                             getNormWeight(), x.getDimSize(1))))
    return failure();
  // norm_linear_c5
  if (FloatAttr cap = getSoftcapAttr()) {
    if (!isPositiveFinite(cap.getValueAsDouble()))
      return emitOpError("requires 'softcap' > 0, got ")
             << num(cap.getValueAsDouble());
    if (getWeights().size() != 1)
      return emitOpError("applies 'softcap' to a single projection, got ")
             << getWeights().size();
  }
  return success();
}

LogicalResult GatedMLPOp::verify() {
  // gated_mlp_c1
  RankedTensorType x = getX().getType();
  if (x.getRank() != 2)
    return emitOpError("requires a [tokens, in] input, got rank ")
           << x.getRank();
  if (getGate().getType() != getUp().getType())
    return emitOpError("requires gate and up weights of one type, got ")
           << getGate().getType() << " and " << getUp().getType();
  if (failed(verifyProjection(*this, x, getGate(), getResult())))
    return failure();
  // gated_mlp_c2
  return verifyFusedNorm(*this, getEpsAttr(), getWeightOffset(),
                         getNormWeight(), x.getDimSize(1));
}

LogicalResult NormRopeOp::verify() {
  // norm_rope_c1
  RankedTensorType x = getX().getType();
  if (x.getRank() != 3 || getResult().getType() != x)
    return emitOpError("requires a [tokens, heads, head_dim] input and a "
                       "result of its type");
  int64_t d = x.getDimSize(2);
  // norm_rope_c2
  if (failed(verifyFusedNorm(*this, getEpsAttr(), getWeightOffset(),
                             getNormWeight(), d)))
    return failure();
  // norm_rope_c3
  if (FloatAttr theta = getThetaAttr()) {
    if (!ShapedType::isDynamic(d) && d % 2 != 0)
      return emitOpError("requires an even head_dim, got ") << d;
    if (!isPositiveFinite(theta.getValueAsDouble()) ||
        !isPositiveFinite(getFactor().convertToDouble()))
      return emitOpError("requires 'theta' and 'factor' > 0");
    if (FloatAttr fraction = getRotaryFractionAttr()) {
      double f = fraction.getValueAsDouble();
      double rotated = f * static_cast<double>(d);
      if (!(f > 0.0 && f <= 1.0) ||
          std::fabs(rotated - std::round(rotated)) > 1e-9 ||
          static_cast<int64_t>(std::round(rotated)) % 2 != 0)
        return emitOpError("requires 'rotary_fraction' in (0, 1] with an "
                           "even rotated width, got ")
               << num(f);
      if (getBasis() != "head_width" && getBasis() != "rotated_width")
        return emitOpError("requires 'basis' head_width or rotated_width");
    }
  } else if (getRotaryFractionAttr() || getBasisAttr()) {
    return emitOpError("takes 'rotary_fraction' and 'basis' only with "
                       "'theta'");
  }
  // norm_rope_c4
  if (static_cast<bool>(getCache()) != static_cast<bool>(getNewCache()))
    return emitOpError("requires a new cache exactly when it takes a cache");
  if (Value cache = getCache()) {
    RankedTensorType c = rankedType(cache);
    if (c.getRank() != 3 || getNewCache().getType() != c ||
        shapesConflict(c.getShape().drop_front(), x.getShape().drop_front()))
      return emitOpError("requires a [slots, heads, head_dim] cache matching ")
             << shapeStr(x.getShape()) << " and a new cache of its type, got "
             << shapeStr(c.getShape());
    if (IntegerAttr window = getWindowAttr())
      if (window.getInt() <= 0 || c.getDimSize(0) != window.getInt())
        return emitOpError("requires a ring cache of exactly 'window' = ")
               << window.getInt() << " slots, got " << c.getDimSize(0);
  } else if (getWindowAttr()) {
    return emitOpError("takes 'window' only with a cache");
  }
  return success();
}
