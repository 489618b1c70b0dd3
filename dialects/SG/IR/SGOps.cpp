//===- SGOps.cpp - sg op verifiers ----------------------------------------===//
//
// Part of sgc. Every check carries the tag of the constraint it enforces
// (`<op>_cN`, as numbered in SGOps.td); test/Dialect/SG/invalid.mlir has one
// negative case per tag.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGOps.h"
#include "dialects/SG/IR/VerifyHelpers.h"

using namespace mlir;
using mlir::sgc::shapeStr;
using namespace mlir::sgc::sg;

//===----------------------------------------------------------------------===//
// WeightOp, EmbedOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  // weight_c1
  if (getName().empty())
    return emitOpError("requires a non-empty checkpoint tensor name");
  // weight_c2
  if (!getResult().getType().hasStaticShape())
    return emitOpError("requires a static shape, got ")
           << shapeStr(getResult().getType().getShape());
  // weight_c3
  return verifyBlockWeight(*this, getResult().getType());
}

LogicalResult EmbedOp::verify() {
  RankedTensorType table = getTable().getType();
  RankedTensorType ids = getIds().getType();
  // embed_c1
  if (table.getRank() != 2 || ids.getRank() != 1)
    return emitOpError("requires a rank-2 table and rank-1 ids, got ranks ")
           << table.getRank() << " and " << ids.getRank();
  // embed_c2
  SmallVector<int64_t> expected = {ids.getDimSize(0), table.getDimSize(1)};
  if (shapesConflict(getResult().getType().getShape(), expected))
    return emitOpError("requires result shape ")
           << shapeStr(expected) << ", got "
           << shapeStr(getResult().getType().getShape());
  // embed_c3
  if (!isPositiveFinite(getScale().convertToDouble()))
    return emitOpError("requires 'scale' > 0, got ")
           << num(getScale().convertToDouble());
  // embed_c4
  return verifyBlockWeight(*this, table);
}

//===----------------------------------------------------------------------===//
// RMSNormOp, LinearOp, SplitHeadsOp, MergeHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  // rms_norm_c1
  if (!isPositiveFinite(getEps().convertToDouble()))
    return emitOpError("requires 'eps' > 0, got ")
           << num(getEps().convertToDouble());
  // rms_norm_c2
  int64_t offset = getWeightOffsetAttr().getInt();
  if (offset != 0 && offset != 1)
    return emitOpError("requires 'weight_offset' 0 or 1, got ") << offset;
  RankedTensorType x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError("requires an input of rank >= 1");
  if (Value weight = getWeight()) {
    // rms_norm_c3
    RankedTensorType w = rankedType(weight);
    if (w.getRank() != 1 || dimsConflict(w.getDimSize(0), x.getShape().back()))
      return emitOpError("requires a weight of shape [")
             << x.getShape().back() << "], got " << shapeStr(w.getShape());
  } else if (offset != 0) {
    // rms_norm_c4
    return emitOpError("without a weight requires 'weight_offset' 0, got ")
           << offset;
  }
  // rms_norm_c5
  if (shapesConflict(getResult().getType().getShape(), x.getShape()))
    return emitOpError("requires the result shape to equal the input shape ")
           << shapeStr(x.getShape());
  return success();
}

LogicalResult LinearOp::verify() {
  RankedTensorType x = getX().getType();
  RankedTensorType w = getW().getType();
  // linear_c1
  if (w.getRank() < 2 || x.getRank() < 1)
    return emitOpError("requires a weight of rank >= 2 and an input of rank "
                       ">= 1, got ranks ")
           << w.getRank() << " and " << x.getRank();
  // linear_c5
  std::optional<StringRef> layout = getWeightLayout();
  if (layout && *layout != "out_in" && *layout != "in_out")
    return emitOpError("requires 'weight_layout' out_in or in_out, got '")
           << *layout << "'";
  bool inOut = isInOut();
  if (inOut && w.getRank() != 2)
    return emitOpError("with 'weight_layout' in_out requires a rank-2 "
                       "weight, got rank ")
           << w.getRank();
  // in: the product of the dimensions after the first (dynamic if any is).
  int64_t in = inOut ? w.getDimSize(0) : 1, out = w.getDimSize(inOut ? 1 : 0);
  if (!inOut)
    for (int64_t d : w.getShape().drop_front())
      in = ShapedType::isDynamic(d) || ShapedType::isDynamic(in)
               ? ShapedType::kDynamic
               : in * d;
  // linear_c2
  if (dimsConflict(x.getShape().back(), in))
    return emitOpError("input width ")
           << x.getShape().back() << " does not match weight 'in' dimension "
           << in;
  // linear_c3
  SmallVector<int64_t> expected(x.getShape());
  expected.back() = out;
  if (shapesConflict(getResult().getType().getShape(), expected))
    return emitOpError("requires result shape ")
           << shapeStr(expected) << ", got "
           << shapeStr(getResult().getType().getShape());
  // linear_c4
  if (Value bias = getBias()) {
    RankedTensorType b = rankedType(bias);
    if (b.getRank() != 1 || dimsConflict(b.getDimSize(0), out))
      return emitOpError("requires a bias of shape [")
             << out << "], got " << shapeStr(b.getShape());
  }
  // linear_c6
  if (isa<QuantType>(w.getElementType()) && inOut)
    return emitOpError("requires a block-encoded weight in the out_in layout");
  return verifyBlockWeight(*this, w);
}

/// Shared check of split_heads / merge_heads: `flat` is [S, H·D] and
/// `split` is [S, H, D].
static LogicalResult verifyHeadsView(Operation *op, RankedTensorType flat,
                                     RankedTensorType split) {
  // split_heads_c1, merge_heads_c1
  if (flat.getRank() != 2 || split.getRank() != 3)
    return op->emitOpError("requires a rank-2 flat and a rank-3 split "
                           "tensor, got ranks ")
           << flat.getRank() << " and " << split.getRank();
  if (dimsConflict(flat.getDimSize(0), split.getDimSize(0)))
    return op->emitOpError("token dimensions differ: ")
           << flat.getDimSize(0) << " vs " << split.getDimSize(0);
  // split_heads_c2, merge_heads_c2
  int64_t h = split.getDimSize(1), d = split.getDimSize(2);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(d) ||
      dimsConflict(flat.getDimSize(1), h * d))
    return op->emitOpError("requires width heads x head_dim = ")
           << (ShapedType::isDynamic(h) || ShapedType::isDynamic(d)
                   ? std::string("?")
                   : std::to_string(h * d))
           << ", got " << flat.getDimSize(1);
  return success();
}

LogicalResult SplitHeadsOp::verify() {
  return verifyHeadsView(*this, getX().getType(), getResult().getType());
}

LogicalResult MergeHeadsOp::verify() {
  return verifyHeadsView(*this, getResult().getType(), getX().getType());
}

//===----------------------------------------------------------------------===//
// TakeRowOp, StackRowsOp
//===----------------------------------------------------------------------===//

/// `type` with its leading dimension set to `rows`.
static RankedTensorType withRows(RankedTensorType type, int64_t rows) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = rows;
  return type.clone(shape);
}

LogicalResult TakeRowOp::verify() {
  // take_row_c1
  auto x = getX().getType();
  if (x.getRank() < 1 || ShapedType::isDynamic(x.getDimSize(0)))
    return emitOpError("requires an input with a static leading dimension, "
                       "got ")
           << x;
  int64_t row = getRow();
  if (row < 0 || row >= x.getDimSize(0))
    return emitOpError("row ") << row << " is outside [0, "
                               << x.getDimSize(0) << ")";
  if (getResult().getType() != withRows(x, 1))
    return emitOpError("requires result type ") << withRows(x, 1) << ", got "
                                                << getResult().getType();
  return success();
}

LogicalResult StackRowsOp::verify() {
  // stack_rows_c1
  if (getRows().empty())
    return emitOpError("requires at least one row");
  auto first = cast<RankedTensorType>(getRows().front().getType());
  if (first.getRank() < 1 || first.getDimSize(0) != 1)
    return emitOpError("requires rows of leading dimension 1, got ") << first;
  for (Value row : getRows())
    if (row.getType() != first)
      return emitOpError("requires rows of one type, got ")
             << first << " and " << row.getType();
  auto expected = withRows(first, getRows().size());
  if (getResult().getType() != expected)
    return emitOpError("requires result type ") << expected << ", got "
                                                << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// RopeOp, PartialRopeOp
//===----------------------------------------------------------------------===//

/// Shared checks of rope / partial_rope: rank 3 (c1) and an even head width
/// (c2).
static LogicalResult verifyRopeInput(Operation *op, RankedTensorType x) {
  // rope_c1, partial_rope_c1
  if (x.getRank() != 3)
    return op->emitOpError("requires a [tokens, heads, head_dim] input, got "
                           "rank ")
           << x.getRank();
  // rope_c2, partial_rope_c2
  int64_t d = x.getDimSize(2);
  if (!ShapedType::isDynamic(d) && d % 2 != 0)
    return op->emitOpError("requires an even head_dim, got ") << d;
  return success();
}

LogicalResult RopeOp::verify() {
  if (failed(verifyRopeInput(*this, getX().getType())))
    return failure();
  // rope_c3
  if (!isPositiveFinite(getTheta().convertToDouble()))
    return emitOpError("requires 'theta' > 0, got ")
           << num(getTheta().convertToDouble());
  // rope_c4
  if (!isPositiveFinite(getFactor().convertToDouble()))
    return emitOpError("requires 'factor' > 0, got ")
           << num(getFactor().convertToDouble());
  return success();
}

/// C3–C6 of sg.partial_rope for head width `d` (also the rebuilt keys of
/// sg.full_attn): `what` prefixes the attribute names ("" or "key_").
static LogicalResult verifyPartialRopeParams(Operation *op, StringRef what,
                                             int64_t d, double theta,
                                             double fraction,
                                             StringRef basis) {
  // partial_rope_c3
  if (!(fraction > 0.0 && fraction <= 1.0))
    return op->emitOpError("requires '")
           << what << "rotary_fraction' in (0, 1], got " << num(fraction);
  // partial_rope_c4
  if (!ShapedType::isDynamic(d)) {
    double rotated = fraction * static_cast<double>(d);
    double whole = std::round(rotated);
    if (std::fabs(rotated - whole) > 1e-9 ||
        static_cast<int64_t>(whole) % 2 != 0 || whole < 2)
      return op->emitOpError("requires an even rotated width ")
             << what << "rotary_fraction x head_dim, got " << num(rotated)
             << " (" << num(fraction) << " x " << d << ")";
  }
  // partial_rope_c5
  if (!isPositiveFinite(theta))
    return op->emitOpError("requires '") << what << "theta' > 0, got "
                                         << num(theta);
  // partial_rope_c6
  if (basis != "head_width" && basis != "rotated_width")
    return op->emitOpError("requires '")
           << what << "basis' head_width or rotated_width, got '" << basis
           << "'";
  return success();
}

LogicalResult PartialRopeOp::verify() {
  if (failed(verifyRopeInput(*this, getX().getType())))
    return failure();
  return verifyPartialRopeParams(*this, "", getX().getType().getDimSize(2),
                                 getTheta().convertToDouble(),
                                 getRotaryFraction().convertToDouble(),
                                 getBasis());
}

//===----------------------------------------------------------------------===//
// SlidingAttnOp, FullAttnOp, KVWriteOp
//===----------------------------------------------------------------------===//

namespace {
/// The operands of an attention op, unpacked for the shared checks.
struct AttnTypes {
  RankedTensorType q, k, v, kCache, vCache, result;
  /// The image-block ids; null without them.
  Value blocks;
};
} // namespace

/// Checks shared by both attention ops, whose constraints c1, c3, c4, c6,
/// c7, c8 and c9 have the same meaning.
static LogicalResult verifyAttnCommon(Operation *op, const AttnTypes &t,
                                      double scale) {
  // sliding_attn_c1, full_attn_c1
  for (RankedTensorType ty : {t.q, t.k, t.v, t.kCache, t.vCache})
    if (ty.getRank() != 3)
      return op->emitOpError("requires rank-3 q, k, v and caches, got a "
                             "rank-")
             << ty.getRank() << " operand";
  // sliding_attn_c3, full_attn_c3
  int64_t hq = t.q.getDimSize(1), hkv = t.k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv <= 0 || hq % hkv != 0))
    return op->emitOpError("requires query heads (")
           << hq << ") to be a multiple of key/value heads (" << hkv << ")";
  // sliding_attn_c4, full_attn_c4
  if (dimsConflict(t.k.getDimSize(0), t.q.getDimSize(0)) ||
      dimsConflict(t.v.getDimSize(0), t.q.getDimSize(0)))
    return op->emitOpError("requires k and v to have the token count of q");
  if (dimsConflict(t.q.getDimSize(2), t.k.getDimSize(2)))
    return op->emitOpError("requires q and k to have the same head_dim, got ")
           << t.q.getDimSize(2) << " and " << t.k.getDimSize(2);
  if (dimsConflict(t.v.getDimSize(1), hkv))
    return op->emitOpError("requires k and v to have the same heads, got ")
           << hkv << " and " << t.v.getDimSize(1);
  if (shapesConflict(t.kCache.getShape().drop_front(),
                     t.k.getShape().drop_front()) ||
      shapesConflict(t.vCache.getShape().drop_front(),
                     t.v.getShape().drop_front()))
    return op->emitOpError("requires caches of [slots, heads, head_dim] "
                           "matching k ")
           << shapeStr(t.k.getShape()) << " and v " << shapeStr(t.v.getShape())
           << ", got " << shapeStr(t.kCache.getShape()) << " and "
           << shapeStr(t.vCache.getShape());
  // sliding_attn_c6, full_attn_c6
  if (!isPositiveFinite(scale))
    return op->emitOpError("requires 'scale' > 0, got ") << num(scale);
  // sliding_attn_c7, full_attn_c7
  SmallVector<int64_t> expected = {t.q.getDimSize(0), hq, t.v.getDimSize(2)};
  if (shapesConflict(t.result.getShape(), expected))
    return op->emitOpError("requires result shape ")
           << shapeStr(expected) << ", got " << shapeStr(t.result.getShape());
  if (!t.blocks)
    return success();
  RankedTensorType blocks = rankedType(t.blocks);
  // sliding_attn_c8, full_attn_c8
  if (blocks.getRank() != 1 || !blocks.getElementType().isSignlessInteger(32))
    return op->emitOpError("requires image-block ids of type tensor<?xi32>, "
                           "got ")
           << blocks;
  // sliding_attn_c9, full_attn_c9
  if (dimsConflict(blocks.getDimSize(0), t.q.getDimSize(0)))
    return op->emitOpError("requires one image-block id per query token (")
           << t.q.getDimSize(0) << "), got " << blocks.getDimSize(0);
  return success();
}

LogicalResult SlidingAttnOp::verify() {
  AttnTypes t{getQ().getType(),      getK().getType(),
              getV().getType(),      getKCache().getType(),
              getVCache().getType(), getResult().getType(),
              getBlocks()};
  // sliding_attn_c2
  int64_t window = getWindowAttr().getInt();
  if (window <= 0)
    return emitOpError("requires 'window' > 0, got ") << window;
  if (failed(verifyAttnCommon(*this, t, getScale().convertToDouble())))
    return failure();
  // sliding_attn_c5
  for (RankedTensorType cache : {t.kCache, t.vCache})
    if (ShapedType::isDynamic(cache.getDimSize(0)) ||
        cache.getDimSize(0) != window)
      return emitOpError("requires caches of exactly 'window' = ")
             << window << " slots, got " << cache.getDimSize(0);
  return success();
}

LogicalResult FullAttnOp::verify() {
  AttnTypes t{getQ().getType(),      getK().getType(),
              getV().getType(),      getKCache().getType(),
              getVCache().getType(), getResult().getType(),
              getBlocks()};
  if (failed(verifyAttnCommon(*this, t, getScale().convertToDouble())))
    return failure();
  // full_attn_c2
  int64_t kSlots = t.kCache.getDimSize(0), vSlots = t.vCache.getDimSize(0);
  if (dimsConflict(kSlots, vSlots) ||
      (!ShapedType::isDynamic(kSlots) && kSlots < 1))
    return emitOpError("requires caches with the same number of slots >= 1, "
                       "got ")
           << kSlots << " and " << vSlots;
  // full_attn_c5
  if (getVFromK() && shapesConflict(t.v.getShape(), t.k.getShape()))
    return emitOpError("with 'v_from_k' requires v to have the shape of k ")
           << shapeStr(t.k.getShape()) << ", got " << shapeStr(t.v.getShape());
  if (!keysFromValues()) {
    if (getKeyThetaAttr() || getKeyRotaryFractionAttr() || getKeyBasisAttr())
      return emitOpError("has key_theta, key_rotary_fraction or key_basis "
                         "without keys_from_values");
    return success();
  }
  // full_attn_c10
  if (!getVFromK())
    return emitOpError("with keys_from_values requires 'v_from_k'");
  if (getKCache() != getVCache() || getK() != getV())
    return emitOpError("with keys_from_values requires one cache (V) as "
                       "k_cache and v_cache, and v as k");
  auto weight = cast<RankedTensorType>(getKeyWeight().getType());
  int64_t d = t.k.getDimSize(2);
  if (weight.getRank() != 1 || dimsConflict(weight.getDimSize(0), d))
    return emitOpError("with keys_from_values requires a [")
           << d << "] weight, got " << shapeStr(weight.getShape());
  if (!getKeyThetaAttr() || !getKeyRotaryFractionAttr() || !getKeyBasisAttr())
    return emitOpError("with keys_from_values requires key_theta, "
                       "key_rotary_fraction and key_basis");
  return verifyPartialRopeParams(*this, "key_", d,
                                 getKeyThetaAttr().getValueAsDouble(),
                                 getKeyRotaryFractionAttr().getValueAsDouble(),
                                 *getKeyBasis());
}

LogicalResult KVWriteOp::verify() {
  RankedTensorType cache = getCache().getType();
  RankedTensorType values = getValues().getType();
  // kv_write_c1
  if (cache.getRank() != 3 || values.getRank() != 3)
    return emitOpError("requires rank-3 cache and values, got ranks ")
           << cache.getRank() << " and " << values.getRank();
  // kv_write_c2
  if (shapesConflict(cache.getShape().drop_front(),
                     values.getShape().drop_front()))
    return emitOpError("requires values of [tokens, heads, head_dim] "
                       "matching the cache ")
           << shapeStr(cache.getShape()) << ", got "
           << shapeStr(values.getShape());
  // kv_write_c3
  if (IntegerAttr window = getWindowAttr()) {
    int64_t w = window.getInt();
    if (w <= 0)
      return emitOpError("requires 'window' > 0, got ") << w;
    if (ShapedType::isDynamic(cache.getDimSize(0)) ||
        cache.getDimSize(0) != w)
      return emitOpError("requires a ring cache of exactly 'window' = ")
             << w << " slots, got " << cache.getDimSize(0);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LayerScalarOp, SoftcapOp, OpaqueComponentOp
//===----------------------------------------------------------------------===//

LogicalResult LayerScalarOp::verify() {
  // layer_scalar_c1
  RankedTensorType s = getScalar().getType();
  if (!s.hasStaticShape() || s.getNumElements() != 1)
    return emitOpError("requires a one-element scalar, got shape ")
           << shapeStr(s.getShape());
  return success();
}

LogicalResult SoftcapOp::verify() {
  // softcap_c1
  if (!isPositiveFinite(getCap().convertToDouble()))
    return emitOpError("requires 'cap' > 0, got ")
           << num(getCap().convertToDouble());
  return success();
}

LogicalResult OpaqueComponentOp::verify() {
  // opaque_component_c1
  if (getComponent().empty())
    return emitOpError("requires a non-empty component id");
  return success();
}

//===----------------------------------------------------------------------===//
// Vision towers
//===----------------------------------------------------------------------===//

/// `t` has rank 1 and `width` elements.
static bool isChannelVector(Value t, int64_t width) {
  RankedTensorType type = rankedType(t);
  return type.getRank() == 1 && !dimsConflict(type.getDimSize(0), width);
}

/// `t` is [tokens, 2] (patch positions).
static bool isPositionTable(Value t, int64_t tokens) {
  RankedTensorType type = rankedType(t);
  return type.getRank() == 2 && !dimsConflict(type.getDimSize(0), tokens) &&
         !dimsConflict(type.getDimSize(1), 2);
}

LogicalResult LayerNormOp::verify() {
  // layer_norm_c1
  if (!isPositiveFinite(getEps().convertToDouble()))
    return emitOpError("requires 'eps' > 0, got ")
           << num(getEps().convertToDouble());
  RankedTensorType x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError("requires an input of rank >= 1");
  // layer_norm_c2
  int64_t width = x.getShape().back();
  if (!isChannelVector(getWeight(), width) || !isChannelVector(getBias(), width))
    return emitOpError("requires a weight and a bias of shape [")
           << width << "], got " << shapeStr(getWeight().getType().getShape())
           << " and " << shapeStr(getBias().getType().getShape());
  // layer_norm_c3
  if (shapesConflict(getResult().getType().getShape(), x.getShape()))
    return emitOpError("requires the result shape to equal the input shape ")
           << shapeStr(x.getShape());
  return success();
}

LogicalResult AffineOp::verify() {
  // affine_c1
  double scale = getScale().convertToDouble(), shift = getShift().convertToDouble();
  if (!std::isfinite(scale) || !std::isfinite(shift))
    return emitOpError("requires finite 'scale' and 'shift', got ")
           << num(scale) << " and " << num(shift);
  // affine_c2
  if (shapesConflict(getResult().getType().getShape(), getX().getType().getShape()))
    return emitOpError("requires the result shape to equal the input shape ")
           << shapeStr(getX().getType().getShape());
  return success();
}

LogicalResult EncoderAttnOp::verify() {
  RankedTensorType q = getQ().getType(), k = getK().getType(), v = getV().getType();
  // encoder_attn_c1
  for (RankedTensorType t : {q, k, v})
    if (t.getRank() != 3)
      return emitOpError("requires rank-3 q, k and v, got a rank-")
             << t.getRank() << " operand";
  // encoder_attn_c2
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv <= 0 || hq % hkv != 0))
    return emitOpError("requires query heads (")
           << hq << ") to be a multiple of key/value heads (" << hkv << ")";
  if (shapesConflict(k.getShape().take_front(2), v.getShape().take_front(2)))
    return emitOpError("requires k and v with the same tokens and heads, got ")
           << shapeStr(k.getShape()) << " and " << shapeStr(v.getShape());
  if (dimsConflict(q.getDimSize(2), k.getDimSize(2)))
    return emitOpError("requires q and k to have the same head_dim, got ")
           << q.getDimSize(2) << " and " << k.getDimSize(2);
  // encoder_attn_c3
  if (Value positions = getKeyPositions())
    if (!isPositionTable(positions, k.getDimSize(0)))
      return emitOpError("requires key positions of shape [")
             << k.getDimSize(0) << ", 2], got "
             << shapeStr(rankedType(positions).getShape());
  // encoder_attn_c4
  if (!isPositiveFinite(getScale().convertToDouble()))
    return emitOpError("requires 'scale' > 0, got ")
           << num(getScale().convertToDouble());
  // encoder_attn_c5
  SmallVector<int64_t> expected = {q.getDimSize(0), hq, v.getDimSize(2)};
  if (shapesConflict(getResult().getType().getShape(), expected))
    return emitOpError("requires result shape ")
           << shapeStr(expected) << ", got "
           << shapeStr(getResult().getType().getShape());
  return success();
}

LogicalResult AxialRopeOp::verify() {
  RankedTensorType x = getX().getType();
  // axial_rope_c1
  if (x.getRank() != 3)
    return emitOpError("requires a [tokens, heads, head_dim] input, got rank ")
           << x.getRank();
  int64_t d = x.getDimSize(2);
  if (ShapedType::isDynamic(d) || d % 4 != 0)
    return emitOpError("requires a head_dim divisible by 4, got ") << d;
  // axial_rope_c2
  if (!isPositionTable(getPositions(), x.getDimSize(0)))
    return emitOpError("requires positions of shape [")
           << x.getDimSize(0) << ", 2], got "
           << shapeStr(getPositions().getType().getShape());
  // axial_rope_c3
  if (!isPositiveFinite(getTheta().convertToDouble()))
    return emitOpError("requires 'theta' > 0, got ")
           << num(getTheta().convertToDouble());
  return success();
}

LogicalResult AddPositionEmbeddingOp::verify() {
  RankedTensorType x = getX().getType(), table = getTable().getType();
  // add_position_embedding_c1
  if (x.getRank() != 2)
    return emitOpError("requires an [N, D] input, got rank ") << x.getRank();
  if (Value positions = getPositions()) {
    // add_position_embedding_c3
    if (table.getRank() != 3 || dimsConflict(table.getDimSize(0), 2) ||
        dimsConflict(table.getDimSize(2), x.getDimSize(1)))
      return emitOpError("with positions requires a table of shape [2, P, ")
             << x.getDimSize(1) << "], got " << shapeStr(table.getShape());
    if (!isPositionTable(positions, x.getDimSize(0)))
      return emitOpError("requires positions of shape [")
             << x.getDimSize(0) << ", 2], got "
             << shapeStr(rankedType(positions).getShape());
    return success();
  }
  // add_position_embedding_c2
  if (shapesConflict(table.getShape(), x.getShape()))
    return emitOpError("without positions requires a table of the input's "
                       "shape ")
           << shapeStr(x.getShape()) << ", got " << shapeStr(table.getShape());
  return success();
}

LogicalResult AvgPool2DOp::verify() {
  RankedTensorType x = getX().getType();
  // avg_pool_2d_c1
  if (x.getRank() != 2 || ShapedType::isDynamic(x.getDimSize(0)))
    return emitOpError("requires a static [G*G, D] input, got ")
           << shapeStr(x.getShape());
  int64_t n = x.getDimSize(0);
  int64_t g = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  if (g * g != n)
    return emitOpError("requires a square number of tokens, got ") << n;
  // avg_pool_2d_c2
  int64_t k = getKernel();
  if (k <= 0 || g % k != 0)
    return emitOpError("requires a 'kernel' > 0 dividing the grid side ")
           << g << ", got " << k;
  // avg_pool_2d_c3
  SmallVector<int64_t> expected = {(g / k) * (g / k), x.getDimSize(1)};
  if (shapesConflict(getResult().getType().getShape(), expected))
    return emitOpError("requires result shape ")
           << shapeStr(expected) << ", got "
           << shapeStr(getResult().getType().getShape());
  return success();
}

LogicalResult PositionPoolOp::verify() {
  // position_pool_c1
  if (getKernel() <= 0)
    return emitOpError("requires 'kernel' > 0, got ") << getKernel();
  // position_pool_c2
  RankedTensorType x = getX().getType();
  if (x.getRank() != 2 || !isPositionTable(getPositions(), x.getDimSize(0)))
    return emitOpError("requires an [N, D] input and [N, 2] positions, got ")
           << shapeStr(x.getShape()) << " and "
           << shapeStr(getPositions().getType().getShape());
  // position_pool_c3
  RankedTensorType r = getResult().getType();
  if (r.getRank() != 2 || dimsConflict(r.getDimSize(1), x.getDimSize(1)) ||
      ShapedType::isDynamic(r.getDimSize(0)) || r.getDimSize(0) < 1)
    return emitOpError("requires a result of shape [T, ")
           << x.getDimSize(1) << "] with T >= 1, got " << shapeStr(r.getShape());
  return success();
}

LogicalResult StandardizeOp::verify() {
  // standardize_c1
  if (!std::isfinite(getPreScale().convertToDouble()))
    return emitOpError("requires a finite 'pre_scale', got ")
           << num(getPreScale().convertToDouble());
  RankedTensorType x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError("requires an input of rank >= 1");
  // standardize_c2
  int64_t width = x.getShape().back();
  if (static_cast<bool>(getBias()) != static_cast<bool>(getScale()))
    return emitOpError("requires 'bias' and 'scale' together");
  if (getBias() && (!isChannelVector(getBias(), width) ||
                    !isChannelVector(getScale(), width)))
    return emitOpError("requires a bias and a scale of shape [")
           << width << "], got " << shapeStr(rankedType(getBias()).getShape())
           << " and " << shapeStr(rankedType(getScale()).getShape());
  // standardize_c3
  if (shapesConflict(getResult().getType().getShape(), x.getShape()))
    return emitOpError("requires the result shape to equal the input shape ")
           << shapeStr(x.getShape());
  return success();
}

LogicalResult MergeImageRowsOp::verify() {
  RankedTensorType x = getX().getType();
  // merge_image_rows_c1
  if (x.getRank() != 2)
    return emitOpError("requires x of rank 2 [tokens, H], got ")
           << shapeStr(x.getShape());
  // merge_image_rows_c2
  if (shapesConflict(getEmbeds().getType().getShape(), x.getShape()))
    return emitOpError("requires embeds of the shape of x ")
           << shapeStr(x.getShape()) << ", got "
           << shapeStr(getEmbeds().getType().getShape());
  // merge_image_rows_c3
  RankedTensorType blocks = getBlocks().getType();
  if (blocks.getRank() != 1 || !blocks.getElementType().isInteger(32) ||
      shapesConflict(blocks.getShape(), x.getShape().take_front()))
    return emitOpError("requires blocks of i32 [tokens] with the tokens of x, "
                       "got ")
           << blocks;
  return success();
}

#define GET_OP_CLASSES
#include "dialects/SG/IR/SGOps.cpp.inc"
