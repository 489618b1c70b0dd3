//===- PlanMemory.cpp - the plan's activations in one workspace -----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

constexpr int64_t kAlignment = 64;

struct Interval {
  int64_t begin, end; // steps, inclusive
  int64_t bytes;
  int64_t offset = -1;
};

/// Index of temp `name` ("t<i>"), or -1.
int64_t tempIndex(StringRef name) {
  unsigned index;
  if (!name.consume_front("t") || name.getAsInteger(10, index))
    return -1;
  return index;
}

/// Places one variant's temps; returns the updated variant attribute.
FailureOr<DictionaryAttr> planVariant(ModuleOp module, DictionaryAttr variant) {
  Builder b(module.getContext());
  auto temps = variant.getAs<ArrayAttr>("temps");
  auto steps = variant.getAs<ArrayAttr>("steps");
  auto maxTokens = variant.getAs<IntegerAttr>("max_tokens");
  auto logits = variant.getAs<StringAttr>("logits");
  if (!temps || !steps || !maxTokens || !logits)
    return emitError(module.getLoc(), "sg-plan-memory: malformed plan variant");
  int64_t numSteps = steps.size();
  SmallVector<Interval> intervals;
  for (Attribute attr : temps) {
    auto type = cast<RankedTensorType>(cast<TypeAttr>(attr).getValue());
    int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
    for (int64_t d : type.getShape())
      bytes *= ShapedType::isDynamic(d) ? maxTokens.getInt() : d;
    bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    intervals.push_back(Interval{numSteps, -1, bytes});
  }
  for (auto [s, stepAttr] : llvm::enumerate(steps)) {
    auto step = cast<DictionaryAttr>(stepAttr);
    for (StringRef key : {"args", "results"})
      for (Attribute a : step.getAs<ArrayAttr>(key)) {
        int64_t t = tempIndex(cast<StringAttr>(a).getValue());
        if (t < 0 || t >= static_cast<int64_t>(intervals.size()))
          continue;
        intervals[t].begin = std::min<int64_t>(intervals[t].begin, s);
        intervals[t].end = std::max<int64_t>(intervals[t].end, s);
      }
  }
  // The logits are read after the last step.
  int64_t logitsIndex = tempIndex(logits.getValue());
  if (logitsIndex >= 0 && logitsIndex < static_cast<int64_t>(intervals.size()))
    intervals[logitsIndex].end = numSteps;

  // First fit in order of first write.
  SmallVector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t x, size_t y) {
    return intervals[x].begin < intervals[y].begin;
  });
  int64_t total = 0;
  SmallVector<size_t> placed;
  for (size_t i : order) {
    Interval &cur = intervals[i];
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j : placed) {
        const Interval &other = intervals[j];
        bool liveTogether = cur.begin <= other.end && other.begin <= cur.end;
        bool overlap = offset < other.offset + other.bytes &&
                       other.offset < offset + cur.bytes;
        if (liveTogether && overlap) {
          offset = other.offset + other.bytes;
          moved = true;
        }
      }
    }
    cur.offset = offset;
    total = std::max(total, offset + cur.bytes);
    placed.push_back(i);
  }
  SmallVector<int64_t> offsets;
  for (const Interval &interval : intervals)
    offsets.push_back(interval.offset);
  NamedAttrList fields(variant);
  fields.set("offsets", b.getI64ArrayAttr(offsets));
  fields.set("workspace_bytes", b.getI64IntegerAttr(total));
  return fields.getDictionary(module.getContext());
}

struct PlanMemoryPass : public sgc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto plan = module->getAttrOfType<DictionaryAttr>("sg.plan");
    if (!plan)
      return;
    auto variants = plan.getAs<DictionaryAttr>("variants");
    if (!variants)
      return;
    Builder b(module.getContext());
    NamedAttrList updated;
    int64_t workspace = 0;
    for (NamedAttribute variant : variants) {
      FailureOr<DictionaryAttr> placed =
          planVariant(module, cast<DictionaryAttr>(variant.getValue()));
      if (failed(placed))
        return signalPassFailure();
      workspace = std::max(workspace,
                           placed->getAs<IntegerAttr>("workspace_bytes").getInt());
      updated.append(variant.getName(), *placed);
    }
    NamedAttrList fields(plan);
    fields.set("variants", updated.getDictionary(module.getContext()));
    fields.set("workspace_bytes", b.getI64IntegerAttr(workspace));
    module->setAttr("sg.plan", fields.getDictionary(module.getContext()));
  }
};

} // namespace
