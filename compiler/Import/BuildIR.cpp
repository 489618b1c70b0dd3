//===- BuildIR.cpp - a validated graph -> sg IR ---------------------------===//
//
// Part of sgc. Unrolls the text decoder layer by layer into `@forward`, in
// the order gemma-text.md §9.1 gives, with each op located at its layer's
// JSON path and each weight at its checkpoint tensor name.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/BuildIR.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Importer.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

namespace {

/// Builds the ops of `@forward` into one block.
class ForwardBuilder {
public:
  ForwardBuilder(OpBuilder &b, const GraphSpec &graph, ComputeDtype dtype,
                 bool withImages, bool rebuildKeys)
      : b(b), graph(graph), text(graph.text), dtype(dtype),
        ct(computeType(b, dtype)), withImages(withImages),
        rebuildKeys(rebuildKeys) {}

  func::FuncOp build(ModuleOp module);

private:
  Location loc(const SourcePos &pos) {
    return makeLoc(b.getContext(), graph.fileName, pos);
  }
  /// `[?, width]` (or `[?, heads, width]`) activations.
  RankedTensorType act(ArrayRef<int64_t> dims) {
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    shape.append(dims.begin(), dims.end());
    return RankedTensorType::get(shape, ct);
  }
  Value weight(Location at, const std::string &name, ArrayRef<int64_t> shape) {
    return buildWeight(b, graph, at, name, shape);
  }
  Value layerWeight(unsigned layer, Location at, StringRef suffix,
                    ArrayRef<int64_t> shape) {
    return weight(at, text.layersPrefix + "." + std::to_string(layer) + "." +
                          suffix.str(),
                  shape);
  }
  Value rmsNorm(Location at, Value x, Value w, const NormSpec &norm) {
    return sg::RMSNormOp::create(b, at, x.getType(), x, w,
                                 b.getF64FloatAttr(norm.eps),
                                 b.getI64IntegerAttr(w ? norm.weightOffset : 0));
  }
  Value linear(Location at, Value x, Value w) {
    auto wType = cast<RankedTensorType>(w.getType());
    return sg::LinearOp::create(b, at, act({wType.getDimSize(0)}), x, w);
  }
  Value rope(Location at, const LayerSpec &layer, Value x, Value pos0);
  /// One decoder layer; updates `h` and the layer's cache results.
  Value layer(const LayerSpec &spec, Value h, Value pos0, Value kCache,
              Value vCache, SmallVectorImpl<Value> &cachesOut);

  OpBuilder &b;
  const GraphSpec &graph;
  const TextSpec &text;
  ComputeDtype dtype;
  Type ct;
  /// The prompt may hold images: @forward takes their soft tokens and
  /// block ids (after the caches) and merges and masks them.
  bool withImages;
  /// ImportOptions::keysFromValues.
  bool rebuildKeys;
  Value imageBlocks;
};

} // namespace

void mlir::sgc::import::tagOps(Block *block, Operation *before,
                               StringRef blockName,
                               std::optional<unsigned> layer) {
  Builder b(block->getParent()->getContext());
  sg::SGDialect::BlockAttrHelper blockAttr(b.getContext());
  sg::SGDialect::LayerAttrHelper layerAttr(b.getContext());
  auto it = before ? std::next(before->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(it, block->end())) {
    if (isa<sg::WeightOp>(op))
      continue;
    blockAttr.setAttr(&op, b.getStringAttr(blockName));
    if (layer)
      layerAttr.setAttr(&op, b.getI64IntegerAttr(*layer));
  }
}

/// The graph object whose binding has the longest prefix of `name`, or null.
static const ObjectSpec *objectOf(const GraphSpec &graph, StringRef name) {
  const ObjectSpec *best = nullptr;
  StringRef bestPrefix;
  for (const ObjectSpec &object : graph.objects)
    for (const BindingSpec &binding : object.bindings) {
      StringRef prefix = binding.tensorPrefix;
      if (name.starts_with(prefix) && prefix.size() > bestPrefix.size() &&
          (name.size() == prefix.size() || name[prefix.size()] == '.')) {
        best = &object;
        bestPrefix = prefix;
      }
    }
  return best;
}

Value mlir::sgc::import::buildWeight(OpBuilder &b, const GraphSpec &graph,
                                     Location at, const std::string &name,
                                     ArrayRef<int64_t> shape) {
  Location named = NameLoc::get(b.getStringAttr(name), at);
  // The object's encoding is its matrices' storage; vectors stay BF16. A
  // graph read from a weights file takes each tensor's from the file.
  const ObjectSpec *object = objectOf(graph, name);
  Type element = object && object->encoding == "F16" && shape.size() == 2
                     ? Type(b.getF16Type())
                     : Type(b.getBF16Type());
  auto fileTensor = graph.fileTensors.find(name);
  if (fileTensor != graph.fileTensors.end()) {
    StringRef encoding = fileTensor->second.encoding;
    element = encoding == "F32"    ? Type(b.getF32Type())
              : encoding == "F16"  ? Type(b.getF16Type())
              : encoding == "BF16" ? Type(b.getBF16Type())
                                   : Type(sg::QuantType::get(b.getContext(),
                                                             encoding));
  }
  auto op = sg::WeightOp::create(
      b, named, RankedTensorType::get(shape, element), b.getStringAttr(name));
  // The graph object, for the runtime's diagnostics.
  if (object)
    sg::SGDialect::ObjectAttrHelper(b.getContext())
        .setAttr(op, b.getStringAttr(object->id));
  // The family's other spellings, for the runtime's binding (ABI manifest);
  // the file's name of a tensor read from a weights file.
  SmallVector<std::string, 1> alt =
      fileTensor != graph.fileTensors.end()
          ? SmallVector<std::string, 1>{fileTensor->second.name}
          : alternativeTensorNames(graph.text.family, name);
  if (!alt.empty())
    sg::SGDialect::AltNamesAttrHelper(b.getContext())
        .setAttr(op, b.getStrArrayAttr(
                         SmallVector<StringRef>(alt.begin(), alt.end())));
  return op;
}

Value ForwardBuilder::rope(Location at, const LayerSpec &layer, Value x,
                           Value pos0) {
  switch (layer.position) {
  case PositionKind::None:
    return x;
  case PositionKind::Rope:
  case PositionKind::Linear:
    return sg::RopeOp::create(b, at, x, pos0, layer.theta,
                              layer.position == PositionKind::Linear
                                  ? layer.factor
                                  : 1.0);
  case PositionKind::PartialRope:
    return sg::PartialRopeOp::create(
        b, at, x.getType(), x, pos0, b.getF64FloatAttr(layer.theta),
        b.getF64FloatAttr(layer.rotaryFraction), b.getStringAttr(layer.basis));
  }
  llvm_unreachable("unknown position kind");
}

Value ForwardBuilder::layer(const LayerSpec &spec, Value h, Value pos0,
                            Value kCache, Value vCache,
                            SmallVectorImpl<Value> &cachesOut) {
  Location at = loc(spec.pos);
  unsigned l = spec.index;
  int64_t hidden = text.hiddenSize, hq = text.numQHeads;
  int64_t hkv = spec.numKvHeads, d = spec.headDim;

  // Attention block.
  Value x = rmsNorm(at, h, layerWeight(l, at, "input_layernorm.weight", {hidden}),
                    text.preNorm);
  Value q = linear(at, x, layerWeight(l, at, "self_attn.q_proj.weight", {hq * d, hidden}));
  Value k = linear(at, x, layerWeight(l, at, "self_attn.k_proj.weight", {hkv * d, hidden}));
  // V from K: the raw k projection, before k_norm and RoPE.
  Value v = spec.vFromK
                ? k
                : linear(at, x, layerWeight(l, at, "self_attn.v_proj.weight",
                                            {hkv * d, hidden}));
  Value qh = sg::SplitHeadsOp::create(b, at, act({hq, d}), q);
  Value kh = sg::SplitHeadsOp::create(b, at, act({hkv, d}), k);
  Value vh = spec.vFromK ? kh : sg::SplitHeadsOp::create(b, at, act({hkv, d}), v);
  NormSpec qkNorm{text.preNorm.eps, text.qkNormOffset};
  Value qn = rmsNorm(at, qh, layerWeight(l, at, "self_attn.q_norm.weight", {d}), qkNorm);
  // K = RoPE(V · w_k) before rounding (SERVE.md §3) when V is the weightless
  // norm of the raw projection and k_norm has no +1 offset: cache V only.
  bool vOnly = rebuildKeys && spec.span == Span::Full && spec.vFromK &&
               spec.vNorm && spec.position == PositionKind::PartialRope &&
               qkNorm.weightOffset == 0;
  Value kNormWeight = layerWeight(l, at, "self_attn.k_norm.weight", {d});
  // A V-only layer rebuilds its keys from V inside the attention.
  Value kn = vOnly ? Value() : rmsNorm(at, kh, kNormWeight, qkNorm);
  Value vn = spec.vNorm ? rmsNorm(at, vh, Value(), qkNorm) : vh;
  Value qr = rope(at, spec, qn, pos0);
  Value kr = vOnly ? Value() : rope(at, spec, kn, pos0);

  Value attn;
  IntegerAttr window;
  // An image block is bidirectional on sliding layers, and on Gemma 3's
  // full layers too; Gemma 4's full layers stay causal (gemma-vision.md
  // §G.9, transformers 5.24).
  Value blocks = spec.span == Span::Sliding || text.family == Family::Gemma3
                     ? imageBlocks
                     : Value();
  if (spec.span == Span::Sliding) {
    window = b.getI64IntegerAttr(spec.window);
    attn = sg::SlidingAttnOp::create(b, at, act({hq, d}), qr, kr, vn, kCache,
                                     vCache, pos0, blocks, window,
                                     b.getF64FloatAttr(text.scoreScale));
  } else if (vOnly) {
    // The layer's K buffer holds V; its V buffer is returned untouched. The
    // keys, the chunk's too, are rebuilt from V (no kn, kr are built).
    attn = sg::FullAttnOp::create(
        b, at, act({hq, d}), qr, vn, vn, kCache, kCache, pos0, blocks,
        kNormWeight, b.getF64FloatAttr(text.scoreScale), b.getUnitAttr(),
        b.getF64FloatAttr(spec.theta), b.getF64FloatAttr(spec.rotaryFraction),
        b.getStringAttr(spec.basis));
    cachesOut.push_back(
        sg::KVWriteOp::create(b, at, kCache.getType(), vn, kCache, pos0, window));
    cachesOut.push_back(vCache);
  } else {
    attn = sg::FullAttnOp::create(b, at, act({hq, d}), qr, kr, vn, kCache,
                                  vCache, pos0, blocks, Value(),
                                  b.getF64FloatAttr(text.scoreScale),
                                  spec.vFromK ? b.getUnitAttr() : UnitAttr(),
                                  FloatAttr(), FloatAttr(), StringAttr());
  }
  if (!vOnly) {
    cachesOut.push_back(sg::KVWriteOp::create(b, at, kCache.getType(), kr,
                                              kCache, pos0, window));
    cachesOut.push_back(sg::KVWriteOp::create(b, at, vCache.getType(), vn,
                                              vCache, pos0, window));
  }
  Value merged = sg::MergeHeadsOp::create(b, at, act({hq * d}), attn);
  Value o = linear(at, merged, layerWeight(l, at, "self_attn.o_proj.weight", {hidden, hq * d}));
  if (text.postNorms)
    o = rmsNorm(at, o,
                layerWeight(l, at, "post_attention_layernorm.weight", {hidden}),
                text.postNorm);
  h = sg::AddOp::create(b, at, h, o);

  // Gated MLP block: down(gelu_tanh(gate(u)) * up(u)).
  int64_t ffn = text.intermediateSize;
  Value u = rmsNorm(at, h,
                    layerWeight(l, at, "pre_feedforward_layernorm.weight", {hidden}),
                    text.preNorm);
  Value gate = linear(at, u, layerWeight(l, at, "mlp.gate_proj.weight", {ffn, hidden}));
  Value up = linear(at, u, layerWeight(l, at, "mlp.up_proj.weight", {ffn, hidden}));
  Value act = sg::GeluTanhOp::create(b, at, gate);
  Value prod = sg::MulOp::create(b, at, act, up);
  Value m = linear(at, prod, layerWeight(l, at, "mlp.down_proj.weight", {hidden, ffn}));
  if (text.postNorms)
    m = rmsNorm(at, m,
                layerWeight(l, at, "post_feedforward_layernorm.weight", {hidden}),
                text.postNorm);
  h = sg::AddOp::create(b, at, h, m);
  if (spec.layerScalar)
    h = sg::LayerScalarOp::create(b, at, h,
                                  layerWeight(l, at, "layer_scalar", {1}));
  return h;
}

func::FuncOp ForwardBuilder::build(ModuleOp module) {
  Location at = loc(text.pos);
  // Signature: tokens, start position, then K and V cache of every layer.
  SmallVector<Type> inputs = {RankedTensorType::get({ShapedType::kDynamic},
                                                    b.getI32Type()),
                              b.getI64Type()};
  SmallVector<Type> results = {act({text.vocabSize})};
  for (const LayerSpec &spec : text.layers) {
    int64_t slots = spec.span == Span::Sliding ? spec.window : text.contextLength;
    auto cache = RankedTensorType::get({slots, spec.numKvHeads, spec.headDim}, ct);
    inputs.append({cache, cache});
    results.append({cache, cache});
  }
  // The images' soft tokens per prompt row, and each row's image block (-1
  // on text rows).
  if (withImages)
    inputs.append({act({text.hiddenSize}).clone(b.getF32Type()),
                   RankedTensorType::get({ShapedType::kDynamic},
                                         b.getI32Type())});
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, at, "forward",
                                   b.getFunctionType(inputs, results));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  Value tokens = body->getArgument(0), pos0 = body->getArgument(1);
  Value table = weight(at, text.embedPrefix + ".weight",
                       {text.vocabSize, text.hiddenSize});
  Value h = sg::EmbedOp::create(
      b, at, act({text.hiddenSize}), table, tokens,
      b.getF64FloatAttr(text.castEmbedScale
                            ? roundToComputeDtype(text.embedScale, dtype)
                            : text.embedScale));
  if (withImages) {
    imageBlocks = body->getArguments().back();
    Value embeds = body->getArgument(body->getNumArguments() - 2);
    h = sg::MergeImageRowsOp::create(b, at, h.getType(), h, embeds,
                                     imageBlocks);
  }

  tagOps(body, nullptr, "embed", std::nullopt);

  SmallVector<Value> caches;
  for (const LayerSpec &spec : text.layers) {
    Operation *last = &body->back();
    h = layer(spec, h, pos0, body->getArgument(2 + 2 * spec.index),
              body->getArgument(3 + 2 * spec.index), caches);
    tagOps(body, last, "layer", spec.index);
  }
  Operation *lastLayerOp = &body->back();

  Value hf = rmsNorm(at, h,
                     weight(at, text.finalNormPrefix + ".weight", {text.hiddenSize}),
                     text.finalNorm);
  // The tied LM head reads the unscaled embedding table.
  Value logits = linear(at, hf, table);
  if (text.finalSoftcap)
    logits = sg::SoftcapOp::create(b, at, logits,
                                   b.getF64FloatAttr(*text.finalSoftcap));
  tagOps(body, lastLayerOp, "head", std::nullopt);
  SmallVector<Value> outs = {logits};
  outs.append(caches);
  func::ReturnOp::create(b, at, outs);
  return func;
}

OwningOpRef<ModuleOp> mlir::sgc::buildModule(MLIRContext *ctx,
                                             const GraphSpec &graph,
                                             const ImportOptions &options) {
  ctx->loadDialect<sg::SGDialect, func::FuncDialect>();
  OpBuilder b(ctx);
  const TextSpec &text = graph.text;
  OwningOpRef<ModuleOp> module =
      ModuleOp::create(makeLoc(ctx, graph.fileName, SourcePos{"$", 1, 1}));
  sg::SGDialect::ModelIdAttrHelper(ctx).setAttr(
      *module, b.getStringAttr(text.sourceArtifact));
  sg::SGDialect::FamilyAttrHelper(ctx).setAttr(
      *module,
      b.getStringAttr(text.family == Family::Gemma3 ? "gemma3" : "gemma4"));
  sg::SGDialect::ContextLengthAttrHelper(ctx).setAttr(
      *module, b.getI64IntegerAttr(text.contextLength));
  sg::SGDialect::ComputeDtypeAttrHelper(ctx).setAttr(
      *module, b.getStringAttr(computeDtypeName(options.computeDtype)));

  const VisionSpec *tower = nullptr;
  if (options.buildVisionTower)
    for (const VisionSpec &component : graph.opaqueComponents)
      if (component.modality == "image") {
        tower = &component;
        break;
      }
  ForwardBuilder(b, graph, options.computeDtype, tower != nullptr,
                 options.keysFromValues)
      .build(*module);

  // The first image component becomes @encode_image where the target lowers
  // towers; the others stay visible as one op each, validated, not lowered.
  for (const VisionSpec &component : graph.opaqueComponents) {
    if (&component == tower) {
      import::buildEncodeImage(b, *module, graph, component,
                               options.computeDtype);
      continue;
    }
    Location at = makeLoc(ctx, graph.fileName, component.pos);
    b.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(b, at, "component_" + component.id,
                                     b.getFunctionType({}, {}));
    func.setPrivate();
    b.setInsertionPointToStart(func.addEntryBlock());
    auto op = sg::OpaqueComponentOp::create(b, at, component.id);
    op->setAttr("role", b.getStringAttr(component.role));
    op->setAttr("num_layers", b.getI64IntegerAttr(component.numLayers));
    op->setAttr("hidden_size", b.getI64IntegerAttr(component.hiddenSize));
    func::ReturnOp::create(b, at);
  }
  return module;
}
