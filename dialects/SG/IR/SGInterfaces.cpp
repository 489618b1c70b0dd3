//===- SGInterfaces.cpp - what projections and attention ops consist of --===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGInterfaces.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc::sg;

#include "dialects/SG/IR/SGInterfaces.cpp.inc"

/// The fused RMSNorm of a projection: present when `eps` is set.
static void takeNorm(ProjectionParts &p, Value weight, FloatAttr eps,
                     int64_t offset) {
  if (!eps)
    return;
  p.norm = true;
  p.normWeight = weight;
  p.eps = eps.getValueAsDouble();
  p.normOffset = offset;
}

ProjectionParts LinearOp::getProjection() {
  ProjectionParts p;
  p.x = getX();
  p.weights = {getW()};
  p.bias = getBias();
  return p;
}

ProjectionParts NormLinearOp::getProjection() {
  ProjectionParts p;
  p.x = getX();
  takeNorm(p, getNormWeight(), getEpsAttr(), getWeightOffset());
  llvm::append_range(p.weights, getWeights());
  if (FloatAttr cap = getSoftcapAttr()) {
    p.epilogue = ProjectionEpilogue::Softcap;
    p.cap = cap.getValueAsDouble();
  }
  return p;
}

ProjectionParts GatedMLPOp::getProjection() {
  ProjectionParts p;
  p.x = getX();
  takeNorm(p, getNormWeight(), getEpsAttr(), getWeightOffset());
  p.weights = {getGate(), getUp()};
  p.epilogue = ProjectionEpilogue::GatedGelu;
  return p;
}

AttentionParts SlidingAttnOp::getAttention() {
  return {getQ(),        getK(),      getV(),
          getKCache(),   getVCache(), getPos0(),
          getBlocks(),   getWindowAttr().getInt(),
          getScale().convertToDouble()};
}

AttentionParts FullAttnOp::getAttention() {
  return {getQ(),      getK(),      getV(),
          getKCache(), getVCache(), getPos0(),
          getBlocks(), /*window=*/0,
          getScale().convertToDouble()};
}
