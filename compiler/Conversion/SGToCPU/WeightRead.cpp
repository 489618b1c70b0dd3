//===- WeightRead.cpp - float and block-encoded weight reads -------------===//
//
// Part of sgc. Block layouts (design/QUANT.md §3, ggml's block structs):
//   Q8_0: f16 d; i8 q[32]                    w = d · q
//   Q4_0: f16 d; u8 qs[16]: element j < 16 the low nibble of qs[j], j + 16
//         the high one                       w = d · (q − 8)
//   Q6_K: u8 ql[128], qh[64]; i8 sc[16]; f16 d (256 elements, two halves
//         of 128; in a half, element 32·i + l takes the low (i = 0, 1) or
//         high (i = 2, 3) nibble of ql[32·(i % 2) + l] and bits 2i, 2i + 1
//         of qh[l], sub-block scale sc[l / 16 + 2i])
//                                            w = (d · sc) · (q − 32)
//   Q4_K: f16 d, dmin; u8 scales[12]; u8 qs[128] (256 elements, four
//         chunks of 64; element 64·c + l takes the low (l < 32) or high
//         nibble of qs[32·c + l % 32], sub-block j = 2c + l / 32 its 6-bit
//         scale sc and min m packed as get_scale_min_k4 reads them)
//                                            w = (d · sc) · q − dmin · m
//   FP8_CH: f32 s; u8 q[32] (e4m3)           w = s · e4m3(q)
//   INT4_G32: f32 s; u8 qs[16] (Q4_0's order) w = s · (q − 8)
//   INT4_G128: f32 s; u8 qs[64] (four runs of 32 in Q4_0's order)
//                                            w = s · (q − 8)
// Every product is formed in f32 in ggml's order, so the values equal the
// `gguf` package's dequantizers' bit for bit; the compressed-tensors ones
// (the runtime's packing of their FP8 and INT4 checkpoints) are the f32
// product of the stored value and its scale, as compressed-tensors'
// dequantizer forms it in f32.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/WeightRead.h"
#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

MemRefType lowering::weightBufferType(int64_t rows, int64_t k, Type wType) {
  if (auto quant = dyn_cast<sg::QuantType>(wType))
    return MemRefType::get({rows, quant.getRowBytes(k)},
                           IntegerType::get(wType.getContext(), 8));
  return MemRefType::get({rows, k}, wType);
}

namespace {

/// Reads of the block being dequantized, at byte offsets of the row given as
/// index arithmetic (IndexExpr).
struct BlockReader {
  ImplicitLocOpBuilder &b;
  Value w, row;
  int64_t lanes;

  /// `lanes` bytes (i8) from byte `at` of the row.
  Value bytes(const IndexExpr &at) {
    if (lanes == 1)
      return memref::LoadOp::create(b, w, ValueRange{row, at.emit(b)});
    return vector::LoadOp::create(b, VectorType::get({lanes}, b.getI8Type()), w,
                                  ValueRange{row, at.emit(b)});
  }
  /// One int8 at byte `at`, as f32.
  Value signedByte(const IndexExpr &at) {
    Value v = memref::LoadOp::create(b, w, ValueRange{row, at.emit(b)});
    return arith::SIToFPOp::create(b, b.getF32Type(), v);
  }
  /// The f16 at byte `at`, as f32.
  Value half(const IndexExpr &at) {
    auto two = VectorType::get({2}, b.getI8Type());
    auto one = VectorType::get({1}, b.getF16Type());
    Value raw = vector::LoadOp::create(b, two, w, ValueRange{row, at.emit(b)});
    Value h = vector::ExtractOp::create(
        b, vector::BitCastOp::create(b, one, raw), ArrayRef<int64_t>{0});
    return arith::ExtFOp::create(b, b.getF32Type(), h);
  }
  /// The f32 at byte `at`.
  Value single(const IndexExpr &at) {
    auto four = VectorType::get({4}, b.getI8Type());
    auto one = VectorType::get({1}, b.getF32Type());
    Value raw = vector::LoadOp::create(b, four, w, ValueRange{row, at.emit(b)});
    return vector::ExtractOp::create(b, vector::BitCastOp::create(b, one, raw),
                                     ArrayRef<int64_t>{0});
  }
  /// An i8 constant or index value, shaped like the loaded bytes.
  Value splat(Value scalarI8) {
    if (lanes == 1)
      return scalarI8;
    return vector::BroadcastOp::create(
        b, VectorType::get({lanes}, b.getI8Type()), scalarI8);
  }
  Value i8(int64_t v) {
    return splat(arith::ConstantOp::create(b, b.getI8IntegerAttr(v)));
  }
  Value i8Of(const IndexExpr &index) {
    return splat(arith::IndexCastOp::create(b, b.getI8Type(), index.emit(b)));
  }
  /// A scalar f32 shaped like the lanes.
  Value f32Lanes(Value scalar) {
    if (lanes == 1)
      return scalar;
    return vector::BroadcastOp::create(
        b, VectorType::get({lanes}, b.getF32Type()), scalar);
  }
  Value toF32(Value ints) {
    Type f32 = lanes == 1 ? Type(b.getF32Type())
                          : Type(VectorType::get({lanes}, b.getF32Type()));
    return arith::SIToFPOp::create(b, f32, ints);
  }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  /// The integers `q` as f32 times the block's scalar `scale`.
  Value scaled(Value scale, Value q) {
    Value lanesScale = f32Lanes(scale);
    return fmul(lanesScale, toF32(q));
  }
};

Value dequantQ8_0(BlockReader &r, IndexExpr col) {
  IndexExpr base = col / 32 * 34;
  Value q = r.bytes(base + 2 + col % 32);
  Value scale = r.half(base);
  return r.scaled(scale, q);
}

/// n − 8 for the nibble n of element `e` (< 32) of a run of 32 in Q4_0's
/// order whose 16 bytes start at `at`: element j < 16 the low nibble of
/// byte j, j + 16 the high one.
Value offsetNibble(BlockReader &r, const IndexExpr &at, const IndexExpr &e) {
  ImplicitLocOpBuilder &b = r.b;
  Value packed = r.bytes(at + e % 16);
  Value shift = r.i8Of(e / 16 * 4);
  Value shifted = arith::ShRUIOp::create(b, packed, shift);
  Value nibble = arith::AndIOp::create(b, shifted, r.i8(0xF));
  return arith::SubIOp::create(b, nibble, r.i8(8));
}

Value dequantQ4_0(BlockReader &r, IndexExpr col) {
  IndexExpr base = col / 32 * 18;
  Value q = offsetNibble(r, base + 2, col % 32);
  Value scale = r.half(base);
  return r.scaled(scale, q);
}

/// INT4_G32 (`runs` 1) and INT4_G128 (4): an f32 scale, then `runs` runs
/// of 32 nibbles.
Value dequantInt4Groups(BlockReader &r, IndexExpr col, int64_t runs) {
  int64_t elements = 32 * runs, bytes = 4 + 16 * runs;
  IndexExpr base = col / elements * bytes;
  IndexExpr e = col % elements;
  Value q = offsetNibble(r, base + 4 + e / 32 * 16, e % 32);
  Value scale = r.single(base);
  return r.scaled(scale, q);
}

/// FP8_CH: e4m3 bytes become f16 bits by moving the exponent and mantissa
/// up 7 bits (f16's exponent bias is 8 more than e4m3's: the f16 value is
/// the e4m3 one / 256, exact, subnormals included); the scale takes the
/// 256 back (a power of two: s · 256 · (v / 256) is the one rounding of
/// s · v).
Value dequantFP8Ch(BlockReader &r, IndexExpr col) {
  ImplicitLocOpBuilder &b = r.b;
  IndexExpr base = col / 32 * 36;
  Value q = r.bytes(base + 4 + col % 32);
  Type i16 = b.getI16Type(), f16 = b.getF16Type();
  if (r.lanes > 1) {
    i16 = VectorType::get({r.lanes}, i16);
    f16 = VectorType::get({r.lanes}, f16);
  }
  auto word = [&](int64_t v) -> Value {
    Value c = arith::ConstantOp::create(b, b.getI16IntegerAttr(v));
    return r.lanes == 1 ? c : vector::BroadcastOp::create(b, i16, c);
  };
  Value x = arith::ExtUIOp::create(b, i16, q);
  Value magnitude = arith::AndIOp::create(b, x, word(0x7F));
  magnitude = arith::ShLIOp::create(b, magnitude, word(7));
  Value sign = arith::AndIOp::create(b, x, word(0x80));
  sign = arith::ShLIOp::create(b, sign, word(8));
  Value bits = arith::OrIOp::create(b, magnitude, sign);
  Value scaled = arith::ExtFOp::create(
      b,
      r.lanes == 1 ? Type(b.getF32Type())
                   : Type(VectorType::get({r.lanes}, b.getF32Type())),
      Value(arith::BitcastOp::create(b, f16, bits)));
  Value stored = r.single(base);
  Value scale =
      r.fmul(stored, arith::ConstantOp::create(b, b.getF32FloatAttr(256)));
  return r.fmul(r.f32Lanes(scale), scaled);
}

Value dequantQ6_K(BlockReader &r, IndexExpr col) {
  ImplicitLocOpBuilder &b = r.b;
  IndexExpr base = col / 256 * 210;
  IndexExpr e = col % 256;
  IndexExpr half = e / 128, inHalf = e % 128;
  IndexExpr quarter = inHalf / 32, l = inHalf % 32;
  // ql[64·half + 32·(quarter % 2) + l], its low nibble for quarters 0 and 1.
  Value ql = r.bytes(base + half * 64 + quarter % 2 * 32 + l);
  Value lowShift = r.i8Of(quarter / 2 * 4);
  Value low = arith::ShRUIOp::create(b, ql, lowShift);
  low = arith::AndIOp::create(b, low, r.i8(0xF));
  // Bits 2·quarter and 2·quarter + 1 of qh[32·half + l].
  Value qh = r.bytes(base + 128 + half * 32 + l);
  Value highShift = r.i8Of(quarter * 2);
  Value high = arith::ShRUIOp::create(b, qh, highShift);
  high = arith::AndIOp::create(b, high, r.i8(3));
  high = arith::ShLIOp::create(b, high, r.i8(4));
  Value q = arith::OrIOp::create(b, low, high);
  q = arith::SubIOp::create(b, q, r.i8(32));
  // sc[8·half + l / 16 + 2·quarter]; d · sc first, as ggml does.
  Value sc = r.signedByte(base + 192 + half * 8 + l / 16 + quarter * 2);
  Value d = r.half(base + 208);
  Value scale = r.fmul(d, sc);
  return r.scaled(scale, q);
}

Value dequantQ4_K(BlockReader &r, IndexExpr col) {
  ImplicitLocOpBuilder &b = r.b;
  IndexExpr base = col / 256 * 144;
  IndexExpr e = col % 256;
  IndexExpr chunk = e / 64, l = e % 64;
  IndexExpr upper = l / 32;
  Value packed = r.bytes(base + 16 + chunk * 32 + l % 32);
  Value shift = r.i8Of(upper * 4);
  Value q = arith::ShRUIOp::create(b, packed, shift);
  q = arith::AndIOp::create(b, q, r.i8(0xF));
  // d · sc_j and dmin · m_j in f32 (loadQ4KScalesAndMins), then
  // (d · sc) · q − dmin · m: ggml's order.
  Value both = loadQ4KScalesAndMins(b, r.w, r.row, base.emit(b));
  IndexExpr j = chunk * 2 + upper;
  Value scale = vector::ExtractOp::create(b, both, OpFoldResult(j.emit(b)));
  Value min = vector::ExtractOp::create(b, both, OpFoldResult((j + 8).emit(b)));
  Value scaled = r.scaled(scale, q);
  return arith::SubFOp::create(b, scaled, r.f32Lanes(min));
}

/// The dequantized value of a block-encoded weight, exactly, as f32.
Value dequantF32(ImplicitLocOpBuilder &b, Value w, sg::QuantType quant,
                 Value row, Value col, int64_t lanes) {
  BlockReader r{b, w, row, lanes};
  StringRef encoding = quant.getEncoding();
  if (encoding == "Q8_0")
    return dequantQ8_0(r, col);
  if (encoding == "Q4_0")
    return dequantQ4_0(r, col);
  if (encoding == "Q6_K")
    return dequantQ6_K(r, col);
  if (encoding == "Q4_K")
    return dequantQ4_K(r, col);
  if (encoding == "FP8_CH")
    return dequantFP8Ch(r, col);
  assert((encoding == "INT4_G32" || encoding == "INT4_G128") &&
         "QuantType's verifier admits these");
  return dequantInt4Groups(r, col, encoding == "INT4_G32" ? 1 : 4);
}

/// The bf16 pairs of a run of 32 offset-coded nibbles in Q4_0's order
/// (Q4_0, INT4_G32, INT4_G128) that starts at element `col` (a multiple of
/// 32): its 16 possible values bf16(s · (n − 8)), n = 0..15, rounded once
/// into a table that one vpermw indexes with the 32 nibbles. Each value is
/// the one dequantizing and rounding that weight gives (the same f32
/// product, the same rounding), for 5 instructions a block where 32 weights
/// dequantized one by one take 14.
Value nibblePairsByTable(ImplicitLocOpBuilder &b, Value w, Value row, Value col,
                         StringRef encoding) {
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto i16x16 = VectorType::get({16}, b.getI16Type());
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  BlockReader r{b, w, row, 16};
  // The block's scale and the byte where the run's 16 bytes start.
  IndexExpr column(col);
  Value scale, packedAt;
  if (encoding == "Q4_0") {
    IndexExpr base = column / 32 * 18;
    scale = r.half(base);
    packedAt = (base + 2).emit(b);
  } else {
    int64_t runs = encoding == "INT4_G32" ? 1 : 4;
    IndexExpr base = column / (32 * runs) * (4 + 16 * runs);
    scale = r.single(base);
    packedAt = (base + 4 + column % (32 * runs) / 32 * 16).emit(b);
  }
  SmallVector<float> levels;
  for (int n = 0; n < 16; ++n)
    levels.push_back(static_cast<float>(n - 8));
  Value lanesScale = r.f32Lanes(scale);
  Value table = arith::MulFOp::create(
      b, lanesScale,
      arith::ConstantOp::create(
          b, f32x16, DenseElementsAttr::get(f32x16, ArrayRef(levels))));
  Value rounded = vector::BitCastOp::create(
      b, i16x16,
      x86vector::CvtPackedF32ToBF16Op::create(
          b, VectorType::get({16}, b.getBF16Type()), table));
  SmallVector<int64_t> twice, ordered;
  for (int64_t i = 0; i < 32; ++i) {
    twice.push_back(i % 16);
    ordered.push_back(i);
  }
  // vpermw reads a table of 32 words: the 16 values twice.
  Value table32 = vector::ShuffleOp::create(b, rounded, rounded, twice);
  // Elements 0-15 are the low nibbles of the block's 16 bytes, 16-31 the
  // high ones.
  Value packed = r.bytes(packedAt);
  Value mask = arith::ConstantOp::create(
      b, i8x16, DenseElementsAttr::get(i8x16, static_cast<int8_t>(0xF)));
  Value four = arith::ConstantOp::create(
      b, i8x16, DenseElementsAttr::get(i8x16, static_cast<int8_t>(4)));
  Value low = arith::AndIOp::create(b, packed, mask);
  Value high = arith::ShRUIOp::create(b, packed, four);
  Value nibbles = vector::ShuffleOp::create(b, low, high, ordered);
  Value index = arith::ExtUIOp::create(b, i16x32, nibbles);
  Value words =
      LLVM::CallIntrinsicOp::create(
          b, i16x32, b.getStringAttr("llvm.x86.avx512.permvar.hi.512"),
          ValueRange{table32, index})
          .getResult(0);
  return vector::BitCastOp::create(b, VectorType::get({32}, b.getBF16Type()),
                                   words);
}

} // namespace

Value lowering::loadWeightF32(ImplicitLocOpBuilder &b, Value w, Type wType,
                              Value row, Value col, int64_t lanes, Type ct) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  if (!quant)
    return widenWeight(b, emitRowLoad(b, w, ValueRange{row}, col, lanes), ct);
  Value value = dequantF32(b, w, quant, row, col, lanes);
  // Under bf16 activations the reference reads bf16(dequantized weight).
  if (ct.isBF16())
    value = lowering::toF32(b, roundTo(b, value, ct));
  return value;
}

bool lowering::hasWeightPairs(Type wType) {
  return wType.isBF16() || wType.isF16() || isa<sg::QuantType>(wType);
}

Value lowering::loadWeightPairsBF16(ImplicitLocOpBuilder &b, Value w,
                                    Type wType, Value row, Value col) {
  constexpr int64_t kHalf = 16;
  if (wType.isBF16())
    return emitRowLoad(b, w, ValueRange{row}, col, 2 * kHalf);
  if (auto quant = dyn_cast<sg::QuantType>(wType);
      quant && llvm::is_contained({"Q4_0", "INT4_G32", "INT4_G128"},
                                  quant.getEncoding()))
    return nibblePairsByTable(b, w, row, col, quant.getEncoding());
  // Two halves of 16 exact f32 values, each rounded by one vcvtneps2bf16
  // (the expanded integer rounding of arith.truncf costs 6 instructions a
  // vector more), then joined.
  auto halfBF16 = VectorType::get({kHalf}, b.getBF16Type());
  SmallVector<Value, 2> halves;
  for (int64_t h = 0; h < 2; ++h) {
    Value at = (IndexExpr(col) + h * kHalf).emit(b);
    Value exact;
    if (auto quant = dyn_cast<sg::QuantType>(wType))
      exact = dequantF32(b, w, quant, row, at, kHalf);
    else
      exact = lowering::toF32(b, emitRowLoad(b, w, ValueRange{row}, at, kHalf));
    halves.push_back(
        x86vector::CvtPackedF32ToBF16Op::create(b, halfBF16, exact));
  }
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < 2 * kHalf; ++i)
    order.push_back(i);
  return vector::ShuffleOp::create(b, halves[0], halves[1], order);
}

Value lowering::weightBufferColumn(ImplicitLocOpBuilder &b, Type wType,
                                   Value col) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  if (!quant)
    return col;
  return (IndexExpr(col) / quant.getBlockElements() * quant.getBlockBytes())
      .emit(b);
}

Value lowering::loadQ4KScalesAndMins(ImplicitLocOpBuilder &b, Value w,
                                     Value row, Value base) {
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  auto i16x16 = VectorType::get({16}, b.getI16Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  Value h = vector::LoadOp::create(b, i8x16, w, ValueRange{row, base});
  Value zero = arith::ConstantOp::create(
      b, i8x16, DenseElementsAttr::get(i8x16, b.getI8IntegerAttr(0)));
  auto words = [&](ArrayRef<int64_t> order) -> Value {
    return arith::ExtUIOp::create(b, i16x16,
                                  vector::ShuffleOp::create(b, h, zero, order));
  };
  auto wordConst = [&](ArrayRef<int16_t> values) -> Value {
    return arith::ConstantOp::create(b, i16x16,
                                     DenseElementsAttr::get(i16x16, values));
  };
  // The low bits: s[j] / s[j + 4] for the scales, s[j + 4] for the mins
  // (the high nibble for j >= 4); index 16 reads the zero vector.
  Value low = words({4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15});
  low = arith::ShRUIOp::create(
      b, low, wordConst({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4}));
  low = arith::AndIOp::create(b, low,
                              wordConst({63, 63, 63, 63, 15, 15, 15, 15, 63, 63,
                                         63, 63, 15, 15, 15, 15}));
  // The top two bits for j >= 4: s[j − 4] (scales), s[j] (mins).
  Value top = words({16, 16, 16, 16, 4, 5, 6, 7, 16, 16, 16, 16, 8, 9, 10, 11});
  top = arith::ShRUIOp::create(
      b, top, wordConst({6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6}));
  top = arith::ShLIOp::create(
      b, top, wordConst({4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}));
  Value sixBits =
      arith::UIToFPOp::create(b, f32x16, arith::OrIOp::create(b, low, top));
  // d over lanes 0-7, dmin over 8-15.
  Value halves = vector::BitCastOp::create(
      b, VectorType::get({2}, b.getF16Type()),
      vector::LoadOp::create(b, VectorType::get({4}, b.getI8Type()), w,
                             ValueRange{row, base}));
  SmallVector<int64_t> spread;
  for (int64_t i = 0; i < 16; ++i)
    spread.push_back(i / 8);
  Value factors = arith::ExtFOp::create(
      b, f32x16, Value(vector::ShuffleOp::create(b, halves, halves, spread)));
  return arith::MulFOp::create(b, factors, sixBits);
}
