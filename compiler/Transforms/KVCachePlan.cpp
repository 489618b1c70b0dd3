//===- KVCachePlan.cpp - the KV cache plan of a forward function ----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/KVCachePlan.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc;

int64_t KVCachePlan::totalBytes() const {
  int64_t total = 0;
  for (const KVLayerPlan &layer : layers)
    total += layer.bytes();
  return total;
}

int64_t KVCachePlan::naiveBytes() const {
  int64_t total = 0;
  for (const KVLayerPlan &layer : layers)
    total += contextLength * layer.bytesPerToken();
  return total;
}

/// Fills `plan` from one attention op's cache operands.
static LogicalResult planLayer(Operation *op, Value kCache, Value vCache,
                               KVLayerPlan &plan) {
  auto k = cast<RankedTensorType>(kCache.getType());
  auto v = cast<RankedTensorType>(vCache.getType());
  if (!k.hasStaticShape() || !v.hasStaticShape())
    return op->emitError("cannot plan a KV cache of dynamic shape ") << k;
  unsigned bits = k.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0 || v.getElementType() != k.getElementType())
    return op->emitError("cannot plan a KV cache of element types ")
           << k.getElementType() << " and " << v.getElementType();
  plan.slots = k.getDimSize(0);
  plan.kvHeads = k.getDimSize(1);
  plan.headDim = k.getDimSize(2);
  plan.vHeadDim = v.getDimSize(2);
  plan.elementBytes = bits / 8;
  return success();
}

FailureOr<KVCachePlan> KVCachePlan::compute(func::FuncOp forward) {
  KVCachePlan plan;
  bool ok = true;
  forward.walk([&](Operation *op) {
    KVLayerPlan layer;
    layer.layer = plan.layers.size();
    if (auto attn = dyn_cast<sg::SlidingAttnOp>(op)) {
      layer.ring = true;
      layer.window = attn.getWindowAttr().getInt();
      ok &= succeeded(planLayer(op, attn.getKCache(), attn.getVCache(), layer));
    } else if (auto attn = dyn_cast<sg::FullAttnOp>(op)) {
      layer.vFromK = attn.getVFromK();
      layer.keysFromValues = attn.keysFromValues();
      ok &= succeeded(planLayer(op, attn.getKCache(), attn.getVCache(), layer));
      plan.contextLength = std::max(plan.contextLength, layer.slots);
    } else {
      return;
    }
    plan.layers.push_back(layer);
  });
  if (!ok)
    return failure();
  // A model without full layers serves as long a context as the module says.
  if (auto module = forward->getParentOfType<ModuleOp>())
    if (auto context =
            sg::SGDialect::ContextLengthAttrHelper(module.getContext())
                .getAttr(module))
      plan.contextLength = std::max(plan.contextLength, context.getInt());
  return plan;
}
