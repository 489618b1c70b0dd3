//===- BuildVisionIR.cpp - a perception component -> @encode_image --------===//
//
// Part of sgc. Unrolls one image tower and its adapter into the text stream
// (gemma-vision.md §G3.2-G3.4, §G4.2-G4.5) into `@encode_image`: patches in,
// one image's soft tokens out. Its blocks are tagged like the decoder's
// (embed, layer l, head), so the same passes outline and plan it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/BuildIR.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

namespace {

class TowerBuilder {
public:
  TowerBuilder(OpBuilder &b, const GraphSpec &graph, const VisionSpec &tower,
               ComputeDtype dtype)
      : b(b), graph(graph), tower(tower), ct(computeType(b, dtype)) {}

  func::FuncOp build(ModuleOp module);

private:
  /// `[tokens, dims...]` activations of the compute type.
  RankedTensorType act(int64_t tokens, ArrayRef<int64_t> dims) {
    SmallVector<int64_t> shape = {tokens};
    shape.append(dims.begin(), dims.end());
    return RankedTensorType::get(shape, ct);
  }
  Value weight(const std::string &name, ArrayRef<int64_t> shape) {
    return name.empty() ? Value() : buildWeight(b, graph, at, name, shape);
  }
  Value norm(Value x, const NormSpec &spec, const std::string &w,
             const std::string &bias, int64_t width);
  Value linear(Value x, const std::string &w, const std::string &bias,
               int64_t out, int64_t in);
  Value embed(Value pixels, Value positions);
  Value layer(const VisionLayerTensors &names, Value h, Value positions);
  Value head(Value h, Value positions);
  /// Soft tokens per image: Gemma 4's budget, Gemma 3's pooled grid.
  int64_t softTokens() const {
    if (tower.family == Family::Gemma4)
      return tower.softTokensPerImage;
    int64_t side = tower.imageSize / tower.patchSize / tower.poolingKernel;
    return side * side;
  }

  OpBuilder &b;
  const GraphSpec &graph;
  const VisionSpec &tower;
  Type ct;
  Location at = b.getUnknownLoc();
  int64_t patches = tower.patchesPerImage();
};

} // namespace

Value TowerBuilder::norm(Value x, const NormSpec &spec, const std::string &w,
                         const std::string &bias, int64_t width) {
  // One weight per statement: argument order differs between compilers,
  // and the IR must not.
  Value wv = weight(w, {width});
  if (spec.kind == NormKind::LayerNorm) {
    Value bv = weight(bias, {width});
    return sg::LayerNormOp::create(b, at, x.getType(), x, wv, bv,
                                   b.getF64FloatAttr(spec.eps));
  }
  return sg::RMSNormOp::create(b, at, x.getType(), x, wv,
                               b.getF64FloatAttr(spec.eps),
                               b.getI64IntegerAttr(wv ? spec.weightOffset : 0));
}

Value TowerBuilder::linear(Value x, const std::string &w,
                           const std::string &bias, int64_t out, int64_t in) {
  Value wv = weight(w, {out, in});
  Value bv = weight(bias, {out});
  return sg::LinearOp::create(b, at, act(patches, {out}), x, wv, bv,
                              StringAttr());
}

/// Patches -> embeddings with positions (§G3.2, §G4.2).
Value TowerBuilder::embed(Value pixels, Value positions) {
  int64_t d = tower.hiddenSize, p = tower.patchSize, in = tower.patchInputs();
  const VisionTensorNames &t = tower.tensors;
  Value x = pixels;
  Value e;
  if (tower.family == Family::Gemma4) {
    // 2·(pv − 0.5) in f32, then the weight dtype.
    x = sg::AffineOp::create(b, at, act(patches, {in}), x,
                             b.getF64FloatAttr(2.0), b.getF64FloatAttr(-1.0));
    e = linear(x, t.patchWeight, t.patchBias, d, in);
    Value table = weight(t.positionTable, {2, tower.positionTableSize, d});
    return sg::AddPositionEmbeddingOp::create(b, at, e.getType(), e, table,
                                              positions);
  }
  // SigLIP: pixels cast to the weight dtype, the conv as a GEMM over the
  // (channel, ky, kx) patch vector.
  if (!ct.isF32())
    x = sg::AffineOp::create(b, at, act(patches, {in}), x,
                             b.getF64FloatAttr(1.0), b.getF64FloatAttr(0.0));
  Value conv = weight(t.patchWeight, {d, 3, p, p});
  e = sg::LinearOp::create(b, at, act(patches, {d}), x, conv,
                           weight(t.patchBias, {d}), StringAttr());
  Value table = weight(t.positionTable, {tower.positionTableSize, d});
  return sg::AddPositionEmbeddingOp::create(b, at, e.getType(), e, table,
                                            Value());
}

/// One encoder layer (§G3.3, §G4.3).
Value TowerBuilder::layer(const VisionLayerTensors &t, Value h,
                          Value positions) {
  int64_t d = tower.hiddenSize, hq = tower.numHeads, hkv = tower.numKvHeads;
  int64_t hd = tower.headDim, ffn = tower.intermediateSize;
  bool rope = tower.position == PositionKind::Rope;

  Value x = norm(h, tower.preNorm, t.preAttnNorm, t.preAttnNormBias, d);
  Value q = linear(x, t.q, t.qBias, hq * hd, d);
  Value k = linear(x, t.k, t.kBias, hkv * hd, d);
  Value v = linear(x, t.v, t.vBias, hkv * hd, d);
  Value qh = sg::SplitHeadsOp::create(b, at, act(patches, {hq, hd}), q);
  Value kh = sg::SplitHeadsOp::create(b, at, act(patches, {hkv, hd}), k);
  Value vh = sg::SplitHeadsOp::create(b, at, act(patches, {hkv, hd}), v);
  NormSpec qkNorm{tower.preNorm.eps, tower.qkNormOffset, NormKind::RMSNorm};
  if (tower.qkNorms) {
    qh = norm(qh, qkNorm, t.qNorm, "", hd);
    kh = norm(kh, qkNorm, t.kNorm, "", hd);
  }
  if (tower.vNorm)
    vh = norm(vh, qkNorm, "", "", hd);
  if (rope) {
    qh = sg::AxialRopeOp::create(b, at, qh.getType(), qh, positions,
                                 b.getF64FloatAttr(tower.ropeTheta));
    kh = sg::AxialRopeOp::create(b, at, kh.getType(), kh, positions,
                                 b.getF64FloatAttr(tower.ropeTheta));
  }
  // Padding patches (Gemma 4) are masked as keys.
  Value attn = sg::EncoderAttnOp::create(
      b, at, qh.getType(), qh, kh, vh, rope ? positions : Value(),
      b.getF64FloatAttr(tower.scoreScale));
  Value merged = sg::MergeHeadsOp::create(b, at, act(patches, {hq * hd}), attn);
  Value o = linear(merged, t.o, t.oBias, d, hq * hd);
  if (tower.postNorms)
    o = norm(o, tower.postNorm, t.postAttnNorm, "", d);
  h = sg::AddOp::create(b, at, h, o);

  Value u = norm(h, tower.preNorm, t.preFfnNorm, t.preFfnNormBias, d);
  Value m;
  if (tower.ffnKind == FfnKind::Gated) {
    Value gate = linear(u, t.ffnIn, t.ffnInBias, ffn, d);
    Value up = linear(u, t.ffnUp, "", ffn, d);
    Value act = sg::GeluTanhOp::create(b, at, gate);
    m = linear(sg::MulOp::create(b, at, act, up), t.ffnOut, t.ffnOutBias, d,
               ffn);
  } else {
    Value fc1 = linear(u, t.ffnIn, t.ffnInBias, ffn, d);
    m = linear(sg::GeluTanhOp::create(b, at, fc1), t.ffnOut, t.ffnOutBias, d,
               ffn);
  }
  if (tower.postNorms)
    m = norm(m, tower.postNorm, t.postFfnNorm, "", d);
  return sg::AddOp::create(b, at, h, m);
}

/// Final norm, pooling, adapter (§G3.4, §G4.4-G4.5).
Value TowerBuilder::head(Value h, Value positions) {
  int64_t d = tower.hiddenSize, textHidden = graph.text.hiddenSize;
  int64_t k = tower.poolingKernel;
  const VisionTensorNames &t = tower.tensors;
  if (tower.hasFinalNorm)
    h = norm(h, tower.finalNorm, t.finalNorm, t.finalNormBias, d);
  int64_t soft = softTokens();
  Value pooled =
      tower.family == Family::Gemma4
          ? Value(sg::PositionPoolOp::create(b, at, act(soft, {d}), h,
                                             positions, b.getI64IntegerAttr(k)))
          : Value(sg::AvgPool2DOp::create(b, at, act(soft, {d}), h,
                                          b.getI64IntegerAttr(k)));
  if (tower.standardize || tower.poolScale != 1.0) {
    Value bias = tower.standardize ? weight(t.stdBias, {d}) : Value();
    Value scale = tower.standardize ? weight(t.stdScale, {d}) : Value();
    pooled = sg::StandardizeOp::create(b, at, pooled.getType(), pooled, bias,
                                       scale,
                                       b.getF64FloatAttr(tower.poolScale));
  }
  Value n = norm(pooled, tower.adapterNorm,
                 tower.adapterNormWeight ? t.adapterNorm : "", "", d);
  // Gemma 3 stores its projection [in, out].
  bool inOut = tower.family == Family::Gemma3;
  Value w = inOut ? weight(t.projection, {d, textHidden})
                  : weight(t.projection, {textHidden, d});
  return sg::LinearOp::create(b, at, act(soft, {textHidden}), n, w, Value(),
                              inOut ? b.getStringAttr("in_out") : StringAttr());
}

func::FuncOp TowerBuilder::build(ModuleOp module) {
  at = makeLoc(b.getContext(), graph.fileName, tower.pos);
  int64_t textHidden = graph.text.hiddenSize;
  int64_t soft = softTokens();
  SmallVector<Type> inputs = {
      RankedTensorType::get({patches, tower.patchInputs()}, b.getF32Type()),
      RankedTensorType::get({patches, 2}, b.getI32Type())};
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, at, "encode_image",
      b.getFunctionType(inputs, {act(soft, {textHidden})}));
  sg::SGDialect::VariantAttrHelper(b.getContext())
      .setAttr(func, b.getStringAttr("encode_image"));
  sg::SGDialect::MaxTokensAttrHelper(b.getContext())
      .setAttr(func, b.getI64IntegerAttr(patches));
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  sg::SGDialect::ImageAttrHelper(b.getContext())
      .setAttr(module,
               b.getDictionaryAttr(
                   {b.getNamedAttr("image_token_id", i64(tower.tokens.image)),
                    b.getNamedAttr("boi_token_id", i64(tower.tokens.boi)),
                    b.getNamedAttr("eoi_token_id", i64(tower.tokens.eoi)),
                    b.getNamedAttr("patch_size", i64(tower.patchSize)),
                    b.getNamedAttr("image_size", i64(tower.imageSize)),
                    b.getNamedAttr("pooling_kernel",
                                   i64(tower.poolingKernel))}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value pixels = body->getArgument(0), positions = body->getArgument(1);

  Value h = embed(pixels, positions);
  tagOps(body, nullptr, "embed", std::nullopt);
  for (auto [l, names] : llvm::enumerate(tower.tensors.layers)) {
    Operation *last = &body->back();
    h = layer(names, h, positions);
    tagOps(body, last, "layer", l);
  }
  Operation *lastLayerOp = &body->back();
  Value softTokens = head(h, positions);
  tagOps(body, lastLayerOp, "head", std::nullopt);
  func::ReturnOp::create(b, at, softTokens);
  return func;
}

func::FuncOp mlir::sgc::import::buildEncodeImage(OpBuilder &b, ModuleOp module,
                                                 const GraphSpec &graph,
                                                 const VisionSpec &tower,
                                                 ComputeDtype dtype) {
  return TowerBuilder(b, graph, tower, dtype).build(module);
}
