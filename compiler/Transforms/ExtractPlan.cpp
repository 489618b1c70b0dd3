//===- ExtractPlan.cpp - the variant functions as the module's plan -------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_EXTRACTPLANPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// One manifest entry.
struct TensorEntry {
  RankedTensorType type;
  StringAttr object;
  /// What --load-format=dummy fills it with: "random", "ones" or "zeros".
  StringRef fill = "random";
};

/// The manifest: tensor names in first-use order.
struct Manifest {
  llvm::MapVector<StringRef, TensorEntry> tensors;
  unsigned indexOf(sg::WeightOp op) {
    auto [it, inserted] = tensors.insert(
        {op.getName(), TensorEntry{op.getType(),
                                   op->getAttrOfType<StringAttr>("sg.object")}});
    return std::distance(tensors.begin(), it);
  }
};

/// Neutral dummy values for the tensors that scale: norm weights (1 for
/// x·w, 0 for x·(1+w)) and layer scalars (1), found by how `callee` uses its
/// argument `index`.
StringRef fillOf(func::FuncOp callee, unsigned index) {
  if (!callee || callee.isExternal())
    return "random";
  for (Operation *user : callee.getArgument(index).getUsers()) {
    if (auto norm = dyn_cast<sg::RMSNormOp>(user))
      if (norm.getWeight() == callee.getArgument(index))
        return norm.getWeightOffsetAttr().getInt() == 1 ? "zeros" : "ones";
    if (auto scalar = dyn_cast<sg::LayerScalarOp>(user))
      if (scalar.getScalar() == callee.getArgument(index))
        return "ones";
  }
  return "random";
}

/// Serializes one variant function; fails with a diagnostic on IR that is
/// not a plan (ops other than weights and calls).
FailureOr<DictionaryAttr> extractVariant(func::FuncOp func,
                                         Manifest &manifest) {
  Builder b(func.getContext());
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numLayers = (body.getNumArguments() - 2) / 2;
  if (body.getNumArguments() != 2 + 2 * numLayers ||
      ret.getNumOperands() != 1 + 2 * numLayers)
    return func.emitError("sg-extract-plan: expected (tokens, pos0, caches) "
                          "-> (logits, caches)");

  llvm::DenseMap<Value, std::string> names;
  names[body.getArgument(0)] = "tokens";
  names[body.getArgument(1)] = "pos0";
  for (unsigned l = 0; l < numLayers; ++l) {
    names[body.getArgument(2 + 2 * l)] = "k" + std::to_string(l);
    names[body.getArgument(3 + 2 * l)] = "v" + std::to_string(l);
  }
  // A call result returned as a cache is that cache, updated in place.
  for (unsigned l = 0; l < numLayers; ++l) {
    names[ret.getOperand(1 + 2 * l)] = "k" + std::to_string(l);
    names[ret.getOperand(2 + 2 * l)] = "v" + std::to_string(l);
  }

  SmallVector<Attribute> steps, temps;
  for (Operation &op : body.without_terminator()) {
    if (auto weight = dyn_cast<sg::WeightOp>(op)) {
      names[weight] = "w" + std::to_string(manifest.indexOf(weight));
      continue;
    }
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return op.emitError("sg-extract-plan: a variant may only bind weights "
                          "and call bodies (run sg-outline-layers first)");
    SmallVector<Attribute> args, results;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    for (auto [index, arg] : llvm::enumerate(call.getOperands())) {
      args.push_back(b.getStringAttr(names.lookup(arg)));
      if (auto weight = arg.getDefiningOp<sg::WeightOp>()) {
        StringRef fill = fillOf(callee, index);
        if (fill != "random")
          manifest.tensors[weight.getName()].fill = fill;
      }
    }
    for (Value result : call.getResults()) {
      if (!names.count(result)) {
        names[result] = "t" + std::to_string(temps.size());
        temps.push_back(TypeAttr::get(result.getType()));
      }
      results.push_back(b.getStringAttr(names[result]));
    }
    SmallVector<NamedAttribute> step = {
        b.getNamedAttr("callee", call.getCalleeAttr()),
        b.getNamedAttr("args", b.getArrayAttr(args)),
        b.getNamedAttr("results", b.getArrayAttr(results))};
    if (auto layer = call->getAttr("sg.layer"))
      step.push_back(b.getNamedAttr("layer", layer));
    steps.push_back(b.getDictionaryAttr(step));
  }
  std::string logits = names.lookup(ret.getOperand(0));
  if (logits.empty() || logits[0] != 't')
    return func.emitError("sg-extract-plan: logits must come from a call");
  auto maxTokens = func->getAttrOfType<IntegerAttr>("sg.max_tokens");
  return b.getDictionaryAttr(
      {b.getNamedAttr("max_tokens", maxTokens ? maxTokens : b.getI64IntegerAttr(1)),
       b.getNamedAttr("steps", b.getArrayAttr(steps)),
       b.getNamedAttr("temps", b.getArrayAttr(temps)),
       b.getNamedAttr("logits", b.getStringAttr(logits))});
}

struct ExtractPlanPass
    : public sgc::impl::ExtractPlanPassBase<ExtractPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Decode first: its first-use order is the weight table's order.
    SmallVector<func::FuncOp> variants;
    for (StringRef name : {"decode", "prefill"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (func->hasAttr("sg.variant"))
          variants.push_back(func);
    if (variants.empty())
      return;
    Builder b(module.getContext());
    Manifest manifest;
    SmallVector<NamedAttribute> variantAttrs;
    for (func::FuncOp func : variants) {
      FailureOr<DictionaryAttr> plan = extractVariant(func, manifest);
      if (failed(plan))
        return signalPassFailure();
      variantAttrs.push_back(b.getNamedAttr(func.getSymName(), *plan));
    }
    SmallVector<Attribute> tensors;
    for (auto &[name, entry] : manifest.tensors) {
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("type", TypeAttr::get(entry.type)),
          b.getNamedAttr("fill", b.getStringAttr(entry.fill))};
      if (entry.object)
        fields.push_back(b.getNamedAttr("object", entry.object));
      tensors.push_back(b.getDictionaryAttr(fields));
    }
    func::FuncOp first = variants.front();
    SmallVector<NamedAttribute> plan = {
        b.getNamedAttr("tensors", b.getArrayAttr(tensors)),
        b.getNamedAttr("variants", b.getDictionaryAttr(variantAttrs))};
    if (auto kv = first->getAttr("sg.kv_plan"))
      plan.push_back(b.getNamedAttr("kv", kv));
    if (auto context = first->getAttr("sg.kv_context_length"))
      plan.push_back(b.getNamedAttr("context_length", context));
    // Components validated but not lowered (the vision tower) have no entry
    // point yet; they leave the module with a remark and a note in the plan.
    SmallVector<Attribute> unlowered;
    SmallVector<func::FuncOp> opaque;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](sg::OpaqueComponentOp op) {
        op.emitRemark() << "component '" << op.getComponent()
                        << "' is validated but not lowered: the library "
                           "has no entry point for it";
        unlowered.push_back(op.getComponentAttr());
        opaque.push_back(func);
      });
    if (!unlowered.empty())
      plan.push_back(b.getNamedAttr("unlowered", b.getArrayAttr(unlowered)));
    module->setAttr("sg.plan", b.getDictionaryAttr(plan));
    for (func::FuncOp func : variants)
      func.erase();
    for (func::FuncOp func : opaque)
      func.erase();
  }
};

} // namespace
