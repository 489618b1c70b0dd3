//===- PlanKVCache.cpp - record the KV cache plan in the IR ---------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/KVCachePlan.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_PLANKVCACHEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {
struct PlanKVCachePass
    : public sgc::impl::PlanKVCachePassBase<PlanKVCachePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // A batched decode step runs decode's layers once per row: decode's
      // plan is its plan.
      auto variant = sg::SGDialect::VariantAttrHelper(func.getContext())
                         .getAttr(func);
      if (variant && variant.getValue() == "decode_batch")
        continue;
      bool hasAttention = false;
      func.walk([&](Operation *op) {
        hasAttention |= isa<sg::SlidingAttnOp, sg::FullAttnOp>(op);
      });
      if (!hasAttention)
        continue;
      FailureOr<KVCachePlan> plan = KVCachePlan::compute(func);
      if (failed(plan))
        return signalPassFailure();
      Builder b(func.getContext());
      SmallVector<Attribute> layers;
      for (const KVLayerPlan &layer : plan->layers) {
        SmallVector<NamedAttribute> fields = {
            b.getNamedAttr("layer", b.getI64IntegerAttr(layer.layer)),
            b.getNamedAttr("kind",
                           b.getStringAttr(layer.ring ? "ring" : "full")),
            b.getNamedAttr("slots", b.getI64IntegerAttr(layer.slots)),
            b.getNamedAttr("kv_heads", b.getI64IntegerAttr(layer.kvHeads)),
            b.getNamedAttr("head_dim", b.getI64IntegerAttr(layer.headDim)),
            b.getNamedAttr("v_head_dim", b.getI64IntegerAttr(layer.vHeadDim)),
            b.getNamedAttr("bytes_per_token",
                           b.getI64IntegerAttr(layer.bytesPerToken()))};
        if (layer.vFromK)
          fields.push_back(b.getNamedAttr("v_from_k", b.getUnitAttr()));
        if (layer.keysFromValues)
          fields.push_back(
              b.getNamedAttr("keys_from_values", b.getUnitAttr()));
        layers.push_back(b.getDictionaryAttr(fields));
      }
      sg::SGDialect::KvPlanAttrHelper(func.getContext())
          .setAttr(func, b.getArrayAttr(layers));
      sg::SGDialect::KvContextLengthAttrHelper(func.getContext())
          .setAttr(func, b.getI64IntegerAttr(plan->contextLength));
      func.emitRemark() << "KV cache plan of @" << func.getSymName() << ": "
                        << plan->totalBytes() << " B at context "
                        << plan->contextLength << " (naive "
                        << plan->naiveBytes() << " B)";
    }
  }
};
} // namespace
