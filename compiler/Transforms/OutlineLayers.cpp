//===- OutlineLayers.cpp - one function per layer signature ---------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_OUTLINELAYERSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

using BlockTag = sg::SGDialect::BlockAttrHelper;
using LayerTag = sg::SGDialect::LayerAttrHelper;
using BodyTag = sg::SGDialect::BodyAttrHelper;
using VariantTag = sg::SGDialect::VariantAttrHelper;

/// The ops of one tagged block (embed, one layer, head), in program order.
struct Group {
  std::string block;
  std::optional<int64_t> layer;
  SmallVector<Operation *> ops;
};

/// Splits the top-level ops of `func` into contiguous groups by their tags.
/// sg.weight ops and the terminator stay in the caller.
FailureOr<SmallVector<Group>> collectGroups(func::FuncOp func) {
  SmallVector<Group> groups;
  BlockTag blockTag(func.getContext());
  LayerTag layerTag(func.getContext());
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<sg::WeightOp>(op))
      continue;
    auto block = blockTag.getAttr(&op);
    if (!block)
      return op.emitError("sg-outline-layers: op has no '")
             << BlockTag::getNameStr()
             << "' tag (the importer tags every op with its block)";
    std::optional<int64_t> layer;
    if (auto attr = layerTag.getAttr(&op))
      layer = attr.getInt();
    if (groups.empty() || groups.back().block != block.getValue() ||
        groups.back().layer != layer)
      groups.push_back(Group{block.str(), layer, {}});
    groups.back().ops.push_back(&op);
  }
  return groups;
}

class Outliner {
public:
  Outliner(ModuleOp module, func::FuncOp variant, StringRef variantName)
      : module(module), variant(variant), variantName(variantName.str()) {}

  /// Outlines one group and replaces it by a call.
  void outline(const Group &group);

private:
  func::FuncOp findOrInsertBody(func::FuncOp candidate, const Group &group);

  ModuleOp module;
  func::FuncOp variant;
  std::string variantName;
  /// Bodies created for this variant, in creation order.
  SmallVector<func::FuncOp> bodies;
  unsigned numLayerBodies = 0;
};

void Outliner::outline(const Group &group) {
  llvm::SmallPtrSet<Operation *, 32> inGroup(group.ops.begin(),
                                             group.ops.end());
  // Activations (values from other groups or block arguments) come first,
  // then weights, each in order of first use.
  llvm::SetVector<Value> activations, weights;
  for (Operation *op : group.ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && inGroup.contains(def))
        continue;
      if (def && isa<sg::WeightOp>(def))
        weights.insert(operand);
      else
        activations.insert(operand);
    }
  SmallVector<Value> outputs;
  for (Operation *op : group.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !inGroup.contains(user);
          }))
        outputs.push_back(result);

  SmallVector<Value> inputs(activations.begin(), activations.end());
  inputs.append(weights.begin(), weights.end());
  SmallVector<Type> inputTypes, outputTypes;
  for (Value v : inputs)
    inputTypes.push_back(v.getType());
  for (Value v : outputs)
    outputTypes.push_back(v.getType());

  // Build the candidate body.
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = group.ops.front()->getLoc();
  auto body = func::FuncOp::create(b, loc, "sg_outline_candidate",
                                   b.getFunctionType(inputTypes, outputTypes));
  Block *entry = body.addEntryBlock();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip_equal(inputs, entry->getArguments()))
    mapping.map(from, to);
  b.setInsertionPointToStart(entry);
  for (Operation *op : group.ops) {
    Operation *clone = b.clone(*op, mapping);
    clone->removeAttr(BlockTag::getNameStr());
    clone->removeAttr(LayerTag::getNameStr());
  }
  SmallVector<Value> returned;
  for (Value v : outputs)
    returned.push_back(mapping.lookup(v));
  func::ReturnOp::create(b, loc, returned);
  BodyTag(b.getContext()).setAttr(body, b.getStringAttr(group.block));
  sg::SGDialect::BatchInvariantAttrHelper invariant(b.getContext());
  if (invariant.getAttr(variant))
    invariant.setAttr(body, b.getUnitAttr());
  func::FuncOp callee = findOrInsertBody(body, group);

  // Replace the group by a call.
  b.setInsertionPointAfter(group.ops.back());
  auto call = func::CallOp::create(b, loc, callee, inputs);
  if (group.layer)
    LayerTag(b.getContext()).setAttr(call, b.getI64IntegerAttr(*group.layer));
  for (auto [from, to] : llvm::zip_equal(outputs, call.getResults()))
    from.replaceAllUsesWith(to);
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

func::FuncOp Outliner::findOrInsertBody(func::FuncOp candidate,
                                        const Group &group) {
  BodyTag bodyTag(candidate.getContext());
  for (func::FuncOp existing : bodies) {
    if (existing.getFunctionType() != candidate.getFunctionType() ||
        bodyTag.getAttr(existing) != bodyTag.getAttr(candidate))
      continue;
    if (OperationEquivalence::isRegionEquivalentTo(
            &existing.getBody(), &candidate.getBody(),
            OperationEquivalence::IgnoreLocations)) {
      candidate.erase();
      return existing;
    }
  }
  std::string name = variantName + "_" + group.block;
  if (group.layer)
    name += std::to_string(numLayerBodies++);
  candidate.setSymName(name);
  candidate.setPrivate();
  bodies.push_back(candidate);
  return candidate;
}

struct OutlineLayersPass
    : public sgc::impl::OutlineLayersPassBase<OutlineLayersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    VariantTag variantTag(&getContext());
    SmallVector<func::FuncOp> variants;
    for (auto func : module.getOps<func::FuncOp>())
      if (variantTag.getAttr(func))
        variants.push_back(func);
    for (func::FuncOp variant : variants) {
      FailureOr<SmallVector<Group>> groups = collectGroups(variant);
      if (failed(groups))
        return signalPassFailure();
      // Bodies are named after the variant function (decode_b4_layer0).
      Outliner outliner(module, variant, variant.getSymName());
      for (const Group &group : *groups)
        outliner.outline(group);
    }
  }
};

} // namespace
