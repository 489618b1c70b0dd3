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

/// Index arithmetic on the block being read.
struct BlockReader {
  OpBuilder &b;
  Location loc;
  Value w, row;
  int64_t lanes;

  Value c(int64_t v) { return constIndex(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, c(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, c(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, c(y)); }

  /// `lanes` bytes (i8) from byte `at` of the row.
  Value bytes(Value at) {
    if (lanes == 1)
      return memref::LoadOp::create(b, loc, w, ValueRange{row, at});
    return vector::LoadOp::create(
        b, loc, VectorType::get({lanes}, b.getI8Type()), w, ValueRange{row, at});
  }
  /// One int8 at byte `at`, as f32.
  Value signedByte(Value at) {
    Value v = memref::LoadOp::create(b, loc, w, ValueRange{row, at});
    return arith::SIToFPOp::create(b, loc, b.getF32Type(), v);
  }
  /// The f16 at byte `at`, as f32.
  Value half(Value at) {
    auto two = VectorType::get({2}, b.getI8Type());
    auto one = VectorType::get({1}, b.getF16Type());
    Value raw = vector::LoadOp::create(b, loc, two, w, ValueRange{row, at});
    Value h = vector::ExtractOp::create(
        b, loc, vector::BitCastOp::create(b, loc, one, raw), ArrayRef<int64_t>{0});
    return arith::ExtFOp::create(b, loc, b.getF32Type(), h);
  }
  /// The f32 at byte `at`.
  Value single(Value at) {
    auto four = VectorType::get({4}, b.getI8Type());
    auto one = VectorType::get({1}, b.getF32Type());
    Value raw = vector::LoadOp::create(b, loc, four, w, ValueRange{row, at});
    return vector::ExtractOp::create(
        b, loc, vector::BitCastOp::create(b, loc, one, raw), ArrayRef<int64_t>{0});
  }
  /// An i8 constant or index value, shaped like the loaded bytes.
  Value splat(Value scalarI8) {
    if (lanes == 1)
      return scalarI8;
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({lanes}, b.getI8Type()), scalarI8);
  }
  Value i8(int64_t v) {
    return splat(arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(v)));
  }
  Value i8Of(Value index) {
    return splat(arith::IndexCastOp::create(b, loc, b.getI8Type(), index));
  }
  /// A scalar f32 shaped like the lanes.
  Value f32Lanes(Value scalar) {
    if (lanes == 1)
      return scalar;
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({lanes}, b.getF32Type()), scalar);
  }
  Value toF32(Value ints) {
    Type f32 = lanes == 1 ? Type(b.getF32Type())
                          : Type(VectorType::get({lanes}, b.getF32Type()));
    return arith::SIToFPOp::create(b, loc, f32, ints);
  }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
};

Value dequantQ8_0(BlockReader &r, Value col) {
  Value base = r.mul(r.div(col, 32), 34);
  Value q = r.bytes(r.add(base, r.add(r.c(2), r.rem(col, 32))));
  return r.fmul(r.f32Lanes(r.half(base)), r.toF32(q));
}

/// n − 8 for the nibble n of element `e` (< 32) of a run of 32 in Q4_0's
/// order whose 16 bytes start at `at`: element j < 16 the low nibble of
/// byte j, j + 16 the high one.
Value offsetNibble(BlockReader &r, Value at, Value e) {
  OpBuilder &b = r.b;
  Value packed = r.bytes(r.add(at, r.rem(e, 16)));
  Value shift = r.i8Of(r.mul(r.div(e, 16), 4));
  Value nibble = arith::AndIOp::create(
      b, r.loc, arith::ShRUIOp::create(b, r.loc, packed, shift), r.i8(0xF));
  return arith::SubIOp::create(b, r.loc, nibble, r.i8(8));
}

Value dequantQ4_0(BlockReader &r, Value col) {
  Value base = r.mul(r.div(col, 32), 18);
  Value q = offsetNibble(r, r.add(base, r.c(2)), r.rem(col, 32));
  return r.fmul(r.f32Lanes(r.half(base)), r.toF32(q));
}

/// INT4_G32 (`runs` 1) and INT4_G128 (4): an f32 scale, then `runs` runs
/// of 32 nibbles.
Value dequantInt4Groups(BlockReader &r, Value col, int64_t runs) {
  int64_t elements = 32 * runs, bytes = 4 + 16 * runs;
  Value base = r.mul(r.div(col, elements), bytes);
  Value e = r.rem(col, elements);
  Value run = r.add(base, r.add(r.c(4), r.mul(r.div(e, 32), 16)));
  Value q = offsetNibble(r, run, r.rem(e, 32));
  return r.fmul(r.f32Lanes(r.single(base)), r.toF32(q));
}

/// FP8_CH: e4m3 bytes become f16 bits by moving the exponent and mantissa
/// up 7 bits (f16's exponent bias is 8 more than e4m3's: the f16 value is
/// the e4m3 one / 256, exact, subnormals included); the scale takes the
/// 256 back (a power of two: s · 256 · (v / 256) is the one rounding of
/// s · v).
Value dequantFP8Ch(BlockReader &r, Value col) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value base = r.mul(r.div(col, 32), 36);
  Value q = r.bytes(r.add(base, r.add(r.c(4), r.rem(col, 32))));
  Type i16 = b.getI16Type(), f16 = b.getF16Type();
  if (r.lanes > 1) {
    i16 = VectorType::get({r.lanes}, i16);
    f16 = VectorType::get({r.lanes}, f16);
  }
  auto word = [&](int64_t v) -> Value {
    Value c = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(v));
    return r.lanes == 1 ? c : vector::BroadcastOp::create(b, loc, i16, c);
  };
  Value x = arith::ExtUIOp::create(b, loc, i16, q);
  Value magnitude = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, x, word(0x7F)), word(7));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, x, word(0x80)), word(8));
  Value bits = arith::OrIOp::create(b, loc, magnitude, sign);
  Value scaled = arith::ExtFOp::create(
      b, loc, r.lanes == 1 ? Type(b.getF32Type())
                           : Type(VectorType::get({r.lanes}, b.getF32Type())),
      Value(arith::BitcastOp::create(b, loc, f16, bits)));
  Value scale = r.fmul(r.single(base),
                       arith::ConstantOp::create(b, loc, b.getF32FloatAttr(256)));
  return r.fmul(r.f32Lanes(scale), scaled);
}

Value dequantQ6_K(BlockReader &r, Value col) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value base = r.mul(r.div(col, 256), 210);
  Value e = r.rem(col, 256);
  Value half = r.div(e, 128), inHalf = r.rem(e, 128);
  Value quarter = r.div(inHalf, 32), l = r.rem(inHalf, 32);
  // ql[64·half + 32·(quarter % 2) + l], its low nibble for quarters 0 and 1.
  Value qlAt = r.add(base, r.add(r.mul(half, 64),
                                 r.add(r.mul(r.rem(quarter, 2), 32), l)));
  Value low = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, r.bytes(qlAt),
                             r.i8Of(r.mul(r.div(quarter, 2), 4))),
      r.i8(0xF));
  // Bits 2·quarter and 2·quarter + 1 of qh[32·half + l].
  Value qhAt = r.add(base, r.add(r.c(128), r.add(r.mul(half, 32), l)));
  Value high = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, r.bytes(qhAt), r.i8Of(r.mul(quarter, 2))),
      r.i8(3));
  Value q = arith::SubIOp::create(
      b, loc,
      arith::OrIOp::create(b, loc, low,
                           arith::ShLIOp::create(b, loc, high, r.i8(4))),
      r.i8(32));
  // sc[8·half + l / 16 + 2·quarter]; d · sc first, as ggml does.
  Value scAt = r.add(base, r.add(r.c(192), r.add(r.mul(half, 8),
                                                 r.add(r.div(l, 16),
                                                       r.mul(quarter, 2)))));
  Value scale = r.fmul(r.half(r.add(base, r.c(208))), r.signedByte(scAt));
  return r.fmul(r.f32Lanes(scale), r.toF32(q));
}

Value dequantQ4_K(BlockReader &r, Value col) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value base = r.mul(r.div(col, 256), 144);
  Value e = r.rem(col, 256);
  Value chunk = r.div(e, 64), l = r.rem(e, 64);
  Value packed = r.bytes(r.add(base, r.add(r.c(16), r.add(r.mul(chunk, 32),
                                                         r.rem(l, 32)))));
  Value upper = r.div(l, 32);
  Value q = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, packed, r.i8Of(r.mul(upper, 4))),
      r.i8(0xF));
  // d · sc_j and dmin · m_j in f32 (loadQ4KScalesAndMins), then
  // (d · sc) · q − dmin · m: ggml's order.
  Value both = loadQ4KScalesAndMins(b, loc, r.w, r.row, base);
  Value j = r.add(r.mul(chunk, 2), upper);
  Value scale = vector::ExtractOp::create(b, loc, both, OpFoldResult(j));
  Value min = vector::ExtractOp::create(b, loc, both,
                                        OpFoldResult(r.add(j, r.c(8))));
  return arith::SubFOp::create(b, loc, r.fmul(r.f32Lanes(scale), r.toF32(q)),
                               r.f32Lanes(min));
}

/// The dequantized value of a block-encoded weight, exactly, as f32.
Value dequantF32(OpBuilder &b, Location loc, Value w, sg::QuantType quant,
                 Value row, Value col, int64_t lanes) {
  BlockReader r{b, loc, w, row, lanes};
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
Value nibblePairsByTable(OpBuilder &b, Location loc, Value w, Value row,
                         Value col, StringRef encoding) {
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto i16x16 = VectorType::get({16}, b.getI16Type());
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  BlockReader r{b, loc, w, row, 16};
  // The block's scale and the byte where the run's 16 bytes start.
  Value scale, packedAt;
  if (encoding == "Q4_0") {
    Value base = r.mul(r.div(col, 32), 18);
    scale = r.half(base);
    packedAt = r.add(base, r.c(2));
  } else {
    int64_t runs = encoding == "INT4_G32" ? 1 : 4;
    Value base = r.mul(r.div(col, 32 * runs), 4 + 16 * runs);
    scale = r.single(base);
    packedAt = r.add(base, r.add(r.c(4), r.mul(r.div(r.rem(col, 32 * runs), 32), 16)));
  }
  SmallVector<float> levels;
  for (int n = 0; n < 16; ++n)
    levels.push_back(static_cast<float>(n - 8));
  Value table = arith::MulFOp::create(
      b, loc, r.f32Lanes(scale),
      arith::ConstantOp::create(
          b, loc, f32x16, DenseElementsAttr::get(f32x16, ArrayRef(levels))));
  Value rounded = vector::BitCastOp::create(
      b, loc, i16x16,
      x86vector::CvtPackedF32ToBF16Op::create(
          b, loc, VectorType::get({16}, b.getBF16Type()), table));
  SmallVector<int64_t> twice, ordered;
  for (int64_t i = 0; i < 32; ++i) {
    twice.push_back(i % 16);
    ordered.push_back(i);
  }
  // vpermw reads a table of 32 words: the 16 values twice.
  Value table32 =
      vector::ShuffleOp::create(b, loc, rounded, rounded, twice);
  // Elements 0-15 are the low nibbles of the block's 16 bytes, 16-31 the
  // high ones.
  Value packed = r.bytes(packedAt);
  Value mask = arith::ConstantOp::create(
      b, loc, i8x16, DenseElementsAttr::get(i8x16, static_cast<int8_t>(0xF)));
  Value four = arith::ConstantOp::create(
      b, loc, i8x16, DenseElementsAttr::get(i8x16, static_cast<int8_t>(4)));
  Value low = arith::AndIOp::create(b, loc, packed, mask);
  Value high = arith::ShRUIOp::create(b, loc, packed, four);
  Value nibbles = vector::ShuffleOp::create(b, loc, low, high, ordered);
  Value index = arith::ExtUIOp::create(b, loc, i16x32, nibbles);
  Value words = LLVM::CallIntrinsicOp::create(
                    b, loc, i16x32,
                    b.getStringAttr("llvm.x86.avx512.permvar.hi.512"),
                    ValueRange{table32, index})
                    .getResult(0);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({32}, b.getBF16Type()), words);
}

} // namespace

Value lowering::loadWeightF32(OpBuilder &b, Location loc, Value w, Type wType,
                              Value row, Value col, int64_t lanes, Type ct) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  if (!quant)
    return widenWeight(b, loc, emitRowLoad(b, loc, w, ValueRange{row}, col, lanes),
                       ct);
  Value value = dequantF32(b, loc, w, quant, row, col, lanes);
  // Under bf16 activations the reference reads bf16(dequantized weight).
  if (ct.isBF16())
    value = lowering::toF32(b, loc, roundTo(b, loc, value, ct));
  return value;
}

bool lowering::hasWeightPairs(Type wType) {
  return wType.isBF16() || wType.isF16() || isa<sg::QuantType>(wType);
}

Value lowering::loadWeightPairsBF16(OpBuilder &b, Location loc, Value w,
                                    Type wType, Value row, Value col) {
  constexpr int64_t kHalf = 16;
  if (wType.isBF16())
    return emitRowLoad(b, loc, w, ValueRange{row}, col, 2 * kHalf);
  if (auto quant = dyn_cast<sg::QuantType>(wType);
      quant && llvm::is_contained({"Q4_0", "INT4_G32", "INT4_G128"},
                                  quant.getEncoding()))
    return nibblePairsByTable(b, loc, w, row, col, quant.getEncoding());
  // Two halves of 16 exact f32 values, each rounded by one vcvtneps2bf16
  // (the expanded integer rounding of arith.truncf costs 6 instructions a
  // vector more), then joined.
  auto halfBF16 = VectorType::get({kHalf}, b.getBF16Type());
  SmallVector<Value, 2> halves;
  for (int64_t h = 0; h < 2; ++h) {
    Value at = arith::AddIOp::create(b, loc, col, constIndex(b, loc, h * kHalf));
    Value exact;
    if (auto quant = dyn_cast<sg::QuantType>(wType))
      exact = dequantF32(b, loc, w, quant, row, at, kHalf);
    else
      exact = lowering::toF32(b, loc, emitRowLoad(b, loc, w, ValueRange{row}, at, kHalf));
    halves.push_back(
        x86vector::CvtPackedF32ToBF16Op::create(b, loc, halfBF16, exact));
  }
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < 2 * kHalf; ++i)
    order.push_back(i);
  return vector::ShuffleOp::create(b, loc, halves[0], halves[1], order);
}

Value lowering::weightBufferColumn(OpBuilder &b, Location loc, Type wType,
                                   Value col) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  if (!quant)
    return col;
  Value block = arith::DivUIOp::create(
      b, loc, col, constIndex(b, loc, quant.getBlockElements()));
  return arith::MulIOp::create(b, loc, block,
                               constIndex(b, loc, quant.getBlockBytes()));
}

Value lowering::loadQ4KScalesAndMins(OpBuilder &b, Location loc, Value w,
                                    Value row, Value base) {
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  auto i16x16 = VectorType::get({16}, b.getI16Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  Value h = vector::LoadOp::create(b, loc, i8x16, w, ValueRange{row, base});
  Value zero = arith::ConstantOp::create(
      b, loc, i8x16, DenseElementsAttr::get(i8x16, b.getI8IntegerAttr(0)));
  auto words = [&](ArrayRef<int64_t> order) -> Value {
    return arith::ExtUIOp::create(
        b, loc, i16x16, vector::ShuffleOp::create(b, loc, h, zero, order));
  };
  auto wordConst = [&](ArrayRef<int16_t> values) -> Value {
    return arith::ConstantOp::create(
        b, loc, i16x16, DenseElementsAttr::get(i16x16, values));
  };
  // The low bits: s[j] / s[j + 4] for the scales, s[j + 4] for the mins
  // (the high nibble for j >= 4); index 16 reads the zero vector.
  Value low = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(
          b, loc, words({4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15}),
          wordConst({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4})),
      wordConst({63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15}));
  // The top two bits for j >= 4: s[j − 4] (scales), s[j] (mins).
  Value top = arith::ShLIOp::create(
      b, loc,
      arith::ShRUIOp::create(
          b, loc, words({16, 16, 16, 16, 4, 5, 6, 7, 16, 16, 16, 16, 8, 9, 10, 11}),
          wordConst({6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6})),
      wordConst({4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}));
  Value sixBits = arith::UIToFPOp::create(
      b, loc, f32x16, arith::OrIOp::create(b, loc, low, top));
  // d over lanes 0-7, dmin over 8-15.
  Value halves = vector::BitCastOp::create(
      b, loc, VectorType::get({2}, b.getF16Type()),
      vector::LoadOp::create(b, loc, VectorType::get({4}, b.getI8Type()), w,
                             ValueRange{row, base}));
  SmallVector<int64_t> spread;
  for (int64_t i = 0; i < 16; ++i)
    spread.push_back(i / 8);
  Value factors = arith::ExtFOp::create(
      b, loc, f32x16,
      Value(vector::ShuffleOp::create(b, loc, halves, halves, spread)));
  return arith::MulFOp::create(b, loc, factors, sixBits);
}
