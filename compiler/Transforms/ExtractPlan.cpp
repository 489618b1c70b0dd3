//===- ExtractPlan.cpp - the variant functions as plan IR -----------------===//
//
// Part of sgc. Turns each outlined variant (`@decode`, `@prefill`, the
// vision tower's `@encode_image`: weights,
// calls of bodies, a return) into a `plan.entry`, and the weights and KV
// caches they name into the module's `plan.tensor` and `plan.kv_layer`
// tables (dialects/Plan/IR).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_EXTRACTPLANPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

using SG = sg::SGDialect;

/// One manifest entry, in first-use order.
struct TensorEntry {
  RankedTensorType type;
  StringAttr object;
  /// Other checkpoint spellings the importer knows for the family.
  ArrayAttr alt;
  plan::Fill fill = plan::Fill::random;
  LocationAttr loc;
};

/// Neutral dummy values for the tensors that scale: norm weights (1 for
/// x·w, 0 for x·(1+w)) and layer scalars (1), found by how `callee` uses its
/// argument `index`.
plan::Fill fillOf(func::FuncOp callee, unsigned index) {
  if (!callee || callee.isExternal())
    return plan::Fill::random;
  for (Operation *user : callee.getArgument(index).getUsers()) {
    if (auto norm = dyn_cast<sg::RMSNormOp>(user))
      if (norm.getWeight() == callee.getArgument(index))
        return norm.getWeightOffsetAttr().getInt() == 1 ? plan::Fill::zeros
                                                        : plan::Fill::ones;
    if (auto scalar = dyn_cast<sg::LayerScalarOp>(user))
      if (scalar.getScalar() == callee.getArgument(index))
        return plan::Fill::ones;
  }
  return plan::Fill::random;
}

plan::BufferType bufferOf(Type type) {
  auto [shape, element] = sg::storageOf(cast<RankedTensorType>(type));
  return plan::BufferType::get(type.getContext(), shape, element);
}

const plan::CacheHalf kHalves[] = {plan::CacheHalf::key,
                                   plan::CacheHalf::value};

/// Whether every op of `callee` is row-wise (SG_RowWise) and every output
/// has the token dimension first: the step may then run on any subset of
/// rows (plan.call's `rowwise`).
bool isRowwise(func::FuncOp callee, ArrayRef<Value> outs) {
  if (!callee || callee.isExternal())
    return false;
  for (Value out : outs) {
    auto type = cast<plan::BufferType>(out.getType());
    if (type.getShape().empty() || !ShapedType::isDynamic(type.getShape()[0]))
      return false;
  }
  return llvm::all_of(callee.getBody().getOps(), [](Operation &op) {
    return isa<func::ReturnOp>(op) || op.hasTrait<sg::RowWise>();
  });
}

std::string kvSymbol(unsigned layer) { return "kv" + std::to_string(layer); }

class Extractor {
public:
  explicit Extractor(ModuleOp module) : module(module), b(module.getContext()) {}

  LogicalResult extractVariant(func::FuncOp func);
  void writeTables(func::FuncOp first);

private:
  ModuleOp module;
  OpBuilder b;
  llvm::MapVector<StringAttr, TensorEntry> tensors;
};

LogicalResult Extractor::extractVariant(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto variant = SG::VariantAttrHelper(b.getContext()).getAttr(func);
  std::optional<plan::EntryKind> kind =
      plan::symbolizeEntryKind(variant.getValue());
  if (!kind)
    return func.emitError("sg-extract-plan: unknown variant ") << variant;
  bool image = *kind == plan::EntryKind::encode_image;
  // A prefill of a model with an image component ends with the prompt's
  // soft tokens and image blocks (sg-specialize drops them from decode).
  unsigned imageInputs =
      *kind == plan::EntryKind::prefill &&
              SG::ImageAttrHelper(b.getContext()).getAttr(module)
          ? 2
          : 0;
  auto maxTokens = SG::MaxTokensAttrHelper(b.getContext()).getAttr(func);
  // A batched decode step takes each of its rows' position and caches.
  unsigned rows = *kind == plan::EntryKind::decode_batch && maxTokens
                      ? maxTokens.getInt()
                      : 1;
  unsigned numLayers =
      image ? 0
            : (body.getNumArguments() - 1 - rows - imageInputs) / (2 * rows);
  if (image && (body.getNumArguments() != 2 || ret.getNumOperands() != 1))
    return func.emitError("sg-extract-plan: expected (pixels, patch "
                          "positions) -> (soft tokens)");
  if (!image &&
      (body.getNumArguments() != 1 + rows + 2 * numLayers * rows + imageInputs ||
       ret.getNumOperands() != 1 + 2 * numLayers * rows))
    return func.emitError("sg-extract-plan: expected (tokens, ")
           << (rows > 1 ? "each row's position, each row's caches"
                        : "pos0, caches")
           << (imageInputs ? ", soft tokens, image blocks" : "")
           << ") -> (logits, caches)";

  b.setInsertionPointToEnd(module.getBody());
  auto entry = plan::EntryOp::create(
      b, func.getLoc(), func.getSymName().drop_back(StringRef(".variant").size()), *kind,
      maxTokens ? maxTokens.getInt() : 1, /*workspace=*/IntegerAttr());
  Block *block = new Block();
  entry.getBody().push_back(block);
  b.setInsertionPointToStart(block);

  IRMapping map;
  map.map(body.getArgument(0),
          block->addArgument(bufferOf(body.getArgument(0).getType()),
                             func.getLoc()));
  for (unsigned r = 0; r < rows; ++r) {
    Type second = body.getArgument(1 + r).getType();
    map.map(body.getArgument(1 + r),
            block->addArgument(image ? Type(bufferOf(second)) : b.getI64Type(),
                               func.getLoc()));
  }
  bool batched = *kind == plan::EntryKind::decode_batch;
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned l = 0; l < numLayers; ++l)
      for (auto [i, half] : llvm::enumerate(kHalves)) {
        unsigned slot = 2 * numLayers * r + 2 * l + i;
        Value arg = body.getArgument(1 + rows + slot);
        auto cache = plan::KVCacheOp::create(
            b, func.getLoc(), bufferOf(arg.getType()),
            FlatSymbolRefAttr::get(b.getContext(), kvSymbol(l)),
            plan::CacheHalfAttr::get(b.getContext(), half),
            batched ? b.getI64IntegerAttr(r) : IntegerAttr());
        map.map(arg, cache);
        // A call result returned as a cache is that cache, updated in place.
        map.map(ret.getOperand(1 + slot), cache);
      }
  for (unsigned i = body.getNumArguments() - imageInputs;
       i < body.getNumArguments(); ++i)
    map.map(body.getArgument(i),
            block->addArgument(bufferOf(body.getArgument(i).getType()),
                               func.getLoc()));

  SG::ObjectAttrHelper objectAttr(b.getContext());
  SG::AltNamesAttrHelper altNamesAttr(b.getContext());
  SG::LayerAttrHelper layerAttr(b.getContext());
  for (Operation &op : body.without_terminator()) {
    if (auto weight = dyn_cast<sg::WeightOp>(op)) {
      StringAttr name = weight.getNameAttr();
      tensors.insert({name, TensorEntry{weight.getType(),
                                        objectAttr.getAttr(weight),
                                        altNamesAttr.getAttr(weight),
                                        plan::Fill::random, weight.getLoc()}});
      map.map(weight.getResult(),
              plan::WeightOp::create(b, weight.getLoc(),
                                     bufferOf(weight.getType()),
                                     FlatSymbolRefAttr::get(name)));
      continue;
    }
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return op.emitError("sg-extract-plan: a variant may only bind weights "
                          "and call bodies (run sg-outline-layers first)");
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    SmallVector<Value> ins, outs;
    for (auto [index, arg] : llvm::enumerate(call.getOperands())) {
      ins.push_back(map.lookup(arg));
      if (auto weight = arg.getDefiningOp<sg::WeightOp>()) {
        plan::Fill fill = fillOf(callee, index);
        if (fill != plan::Fill::random)
          tensors[weight.getNameAttr()].fill = fill;
      }
    }
    for (Value result : call.getResults()) {
      if (!map.contains(result))
        map.map(result, plan::AllocOp::create(b, call.getLoc(),
                                              bufferOf(result.getType()),
                                              IntegerAttr()));
      outs.push_back(map.lookup(result));
    }
    auto step = plan::CallOp::create(b, call.getLoc(), call.getCalleeAttr(),
                                     ins, outs, IntegerAttr(),
                                     /*rowwise=*/false);
    if (auto layer = layerAttr.getAttr(call))
      step.setLayerAttr(layer);
    if (isRowwise(callee, outs))
      step.setRowwise(true);
  }
  Value logits = map.lookup(ret.getOperand(0));
  if (!logits || !logits.getDefiningOp<plan::AllocOp>())
    return func.emitError("sg-extract-plan: the result must come from a "
                          "call");
  plan::ReturnOp::create(b, ret.getLoc(), logits);
  return success();
}

/// The manifest and the KV plan, before the entries.
void Extractor::writeTables(func::FuncOp first) {
  b.setInsertionPointToStart(module.getBody());
  for (auto &[name, entry] : tensors)
    plan::TensorOp::create(b, entry.loc, name, TypeAttr::get(entry.type),
                           plan::FillAttr::get(b.getContext(), entry.fill),
                           entry.object, entry.alt);
  MLIRContext *ctx = b.getContext();
  auto kv = SG::KvPlanAttrHelper(ctx).getAttr(first);
  if (!kv)
    return;
  Block &body = first.getBody().front();
  for (auto [l, attr] : llvm::enumerate(kv)) {
    auto layer = cast<DictionaryAttr>(attr);
    auto get = [&](StringRef key) {
      return cast<IntegerAttr>(layer.get(key)).getInt();
    };
    auto cacheType =
        cast<RankedTensorType>(body.getArgument(2 + 2 * l).getType());
    plan::KVKind kind = cast<StringAttr>(layer.get("kind")).getValue() == "ring"
                            ? plan::KVKind::ring
                            : plan::KVKind::full;
    plan::KVLayerOp::create(
        b, first.getLoc(), b.getStringAttr(kvSymbol(l)),
        plan::KVKindAttr::get(b.getContext(), kind), b.getI64IntegerAttr(l),
        b.getI64IntegerAttr(get("slots")), b.getI64IntegerAttr(get("kv_heads")),
        b.getI64IntegerAttr(get("head_dim")),
        b.getI64IntegerAttr(get("v_head_dim")),
        TypeAttr::get(cacheType.getElementType()),
        layer.get("v_from_k") ? b.getUnitAttr() : UnitAttr(),
        layer.get("keys_from_values") ? b.getUnitAttr() : UnitAttr());
  }
  // The longest context any layer plans for.
  int64_t context = 0;
  if (auto attr = SG::ContextLengthAttrHelper(ctx).getAttr(module))
    context = attr.getInt();
  if (auto attr = SG::KvContextLengthAttrHelper(ctx).getAttr(first))
    context = std::max(context, attr.getInt());
  if (context > 0)
    plan::PlanDialect::ContextLengthAttrHelper(ctx).setAttr(
        module, b.getI64IntegerAttr(context));
}

struct ExtractPlanPass
    : public sgc::impl::ExtractPlanPassBase<ExtractPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Decode first: its first-use order is the weight table's order.
    SmallVector<func::FuncOp> variants;
    SG::VariantAttrHelper variantAttr(&getContext());
    for (StringRef name : {"decode", "prefill", "encode_image"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (variantAttr.getAttr(func))
          variants.push_back(func);
    // The batched decode steps after the one-token entries, smallest first.
    SmallVector<func::FuncOp> batched;
    for (auto func : module.getOps<func::FuncOp>())
      if (auto v = variantAttr.getAttr(func);
          v && v.getValue() == "decode_batch")
        batched.push_back(func);
    llvm::sort(batched, [&](func::FuncOp a, func::FuncOp b) {
      SG::MaxTokensAttrHelper rows(&getContext());
      return rows.getAttr(a).getInt() < rows.getAttr(b).getInt();
    });
    variants.insert(variants.begin() + std::min<size_t>(variants.size(), 2),
                    batched.begin(), batched.end());
    if (variants.empty())
      return;
    Extractor extractor(module);
    for (func::FuncOp func : variants) {
      // The entry takes the variant's name; the function leaves it first.
      func.setSymName((func.getSymName() + ".variant").str());
      if (failed(extractor.extractVariant(func)))
        return signalPassFailure();
    }
    extractor.writeTables(variants.front());
    // Components validated but not lowered (a target without the vision
    // tower's kernels) have no entry point; they leave with a remark.
    SmallVector<func::FuncOp> opaque;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](sg::OpaqueComponentOp op) {
        op.emitRemark() << "component '" << op.getComponent()
                        << "' is validated but not lowered: the library "
                           "has no entry point for it";
        opaque.push_back(func);
      });
    for (func::FuncOp func : variants)
      func.erase();
    for (func::FuncOp func : opaque)
      func.erase();
  }
};

} // namespace
