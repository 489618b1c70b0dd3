//===- Int8Dot.cpp - 8-bit activations and block-pair dot products --------===//
//
// Part of sgc. The layouts these pieces agree on are in Int8Dot.h. vpdpbusd
// multiplies unsigned by signed bytes, so each encoding's weights become
// unsigned with a zero point: Q4_0's nibbles n are its weights plus 8,
// Q8_0's bytes with the sign bit flipped its weights plus 128, Q6_K's 6-bit
// q its weights plus 32. The zero point times Σ q of the activations
// starts the sum of the weights that share a scale (a block; Q6_K's
// sub-blocks of 16), so the
// integer total is exact: Σ (n − 8) · (256 · high + low) over the block
// (at most 32 · 128 · 32,767 in magnitude: well inside i32). Q4_K, and
// Q4_0 over K a multiple of 256, take Int8Q4Groups.cpp's rows instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Int8Dot.h"
#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "compiler/Conversion/SGToCPU/WeightRead.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;

namespace {
/// How far ahead the int8 rows prefetch the weights, as the bf16 pair rows
/// do (kPairPrefetchElements of 2 bytes).
constexpr int64_t kInt8PrefetchBytes = 2 * kPairPrefetchElements;
/// Elements of a block, and lanes of its i32 dot product.
constexpr int64_t kBlock = 32;
constexpr int64_t kBlockLanes = 8;

/// What the encoding adds to a weight to make it vpdpbusd's unsigned byte,
/// so the record's start is −zeroPoint · Σ q.
int64_t zeroPoint(sg::QuantType quant) {
  StringRef encoding = quant.getEncoding();
  return encoding == "Q4_0" ? 8 : encoding == "Q6_K" ? 32 : 128;
}

/// Whether the encoding scales every 16 weights (Q6_K's sub-blocks), so a
/// block's start is split by 16 elements: lanes 0 and 4 of its 8.
bool startsPer16(sg::QuantType quant) { return quant.getEncoding() == "Q6_K"; }
} // namespace

bool linear::hasInt8Dot(Type wType, int64_t k) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  if (!quant)
    return false;
  StringRef encoding = quant.getEncoding();
  return (encoding == "Q4_0" || encoding == "Q8_0" || encoding == "Q6_K" ||
          encoding == "Q4_K") &&
         k % quant.getBlockElements() == 0 && k % (2 * kBlock) == 0;
}

int64_t linear::int8RowsPerPass(Type wType, int64_t k) {
  return usesQ4Groups(wType, k) ||
                 k / (2 * kBlock) * kInt8RecordBytes <= kInt8RecordsInL1
             ? 1
             : kInt8WideRows;
}

std::pair<Value, Value> linear::emitBlockScale(ImplicitLocOpBuilder &b,
                                               ArrayRef<Value> halves,
                                               float range) {
  Value abs0 = math::AbsFOp::create(b, halves[0]);
  Value abs1 = math::AbsFOp::create(b, halves[1]);
  Value amax =
      vector::ReductionOp::create(b, vector::CombiningKind::MAXNUMF,
                                  arith::MaxNumFOp::create(b, abs0, abs1));
  Value scale = arith::DivFOp::create(b, amax, constF32(b, range));
  Value zero = constF32(b, 0.0f);
  Value byRange = arith::DivFOp::create(b, constF32(b, range), amax);
  Value nonzero = arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, amax,
                                        constF32(b, 0.0f));
  return {scale, arith::SelectOp::create(b, nonzero, byRange, zero)};
}

void linear::storeRecordBytes(ImplicitLocOpBuilder &b, Value records, Value s,
                              Value at, Value v) {
  auto type = cast<VectorType>(v.getType());
  int64_t bytes =
      type.getNumElements() * type.getElementType().getIntOrFloatBitWidth() / 8;
  auto asBytes = VectorType::get({bytes}, b.getI8Type());
  if (type != asBytes)
    v = vector::BitCastOp::create(b, asBytes, v);
  vector::StoreOp::create(b, v, records, ValueRange{s, at});
}

Value linear::loadRecordBytes(ImplicitLocOpBuilder &b, Value records, Value s,
                              Value at, VectorType type) {
  int64_t bytes =
      type.getNumElements() * type.getElementType().getIntOrFloatBitWidth() / 8;
  Value raw = vector::LoadOp::create(b, VectorType::get({bytes}, b.getI8Type()),
                                     records, ValueRange{s, at});
  return vector::BitCastOp::create(b, type, raw);
}

Value linear::vecConst(ImplicitLocOpBuilder &b, VectorType type,
                       Attribute value) {
  return arith::ConstantOp::create(b, type,
                                   DenseElementsAttr::get(type, value));
}

MemRefType linear::int8ActivationType(MLIRContext *ctx, int64_t k) {
  return MemRefType::get({ShapedType::kDynamic, k / (2 * kBlock) * kInt8RecordBytes},
                         IntegerType::get(ctx, 8));
}

func::FuncOp linear::getOrCreateQuantRows(OpBuilder &outer, ModuleOp module,
                                          int64_t k, Type wType) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  if (usesQ4Groups(wType, k))
    return getOrCreateQ4GroupRows(b, module, k, wType);
  auto quant = cast<sg::QuantType>(wType);
  int64_t offset = zeroPoint(quant);
  bool per16 = startsPer16(quant);
  std::string name = llvm::formatv("sgc_quant_rows_{0}_{1}{2}", k, offset,
                                   per16 ? "_s16" : "");
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  SmallVector<Type> args = {f32RowsType(b.getContext(), k)};
  args.push_back(int8ActivationType(b.getContext(), k));
  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func = createPrivateFunction(b, module, name, args);
  Value xs = func.getArgument(0), records = func.getArgument(1);

  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  Value zero = constIndex(b, 0);
  emitFor(b, zero, dimOf(b, records, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    emitFor(b, zero, constIndex(b, k / kBlock),
            [&](ImplicitLocOpBuilder &b, Value j) {
              IndexExpr block(j);
              // Block j's part of its pair's record: 32 bytes from each field's
              // start for the pair's second block.
              IndexExpr base =
                  block / 2 * kInt8RecordBytes + block % 2 * kBlock;
              auto storeBytes = [&](Value v, int64_t at) {
                storeRecordBytes(b, records, s, (base + at).emit(b), v);
              };
              Value halves[2];
              for (int64_t h = 0; h < 2; ++h)
                halves[h] = vector::LoadOp::create(
                    b, f32x16, xs,
                    ValueRange{s, (block * kBlock + 16 * h).emit(b)});
              // llama.cpp's x86 quantizer for the high digit: t = x · (127 /
              // max) rounded to nearest even; an all-zero block has d = 0 and
              // digits 0. t − high is exact; the low digit is the rest in
              // 256ths (|rest| <= 1/2, so only 128 needs clamping).
              auto [d, inverse] = emitBlockScale(b, halves, 127.0f);
              Value byInverse = vector::BroadcastOp::create(b, f32x16, inverse);
              Value by256 = vecConst(b, f32x16, b.getF32FloatAttr(256.0f));
              Value max127 = vecConst(b, i32x16, b.getI32IntegerAttr(127));
              Value sums[2];
              for (int64_t h = 0; h < 2; ++h) {
                Value t = arith::MulFOp::create(b, halves[h], byInverse);
                Value rounded = math::RoundEvenOp::create(b, t);
                Value hi = arith::FPToSIOp::create(b, i32x16, rounded);
                Value lo = arith::MinSIOp::create(
                    b,
                    arith::FPToSIOp::create(
                        b, i32x16,
                        math::RoundEvenOp::create(
                            b, arith::MulFOp::create(
                                   b, arith::SubFOp::create(b, t, rounded),
                                   by256))),
                    max127);
                Value whole = arith::AddIOp::create(
                    b,
                    arith::ShLIOp::create(
                        b, hi, vecConst(b, i32x16, b.getI32IntegerAttr(8))),
                    lo);
                sums[h] = whole;
                storeBytes(arith::TruncIOp::create(b, i8x16, hi), 16 * h);
                storeBytes(arith::TruncIOp::create(b, i8x16, lo), 64 + 16 * h);
              }
              auto i32x8 = VectorType::get({kBlockLanes}, b.getI32Type());
              auto startOf = [&](Value whole) -> Value {
                Value sum = vector::ReductionOp::create(
                    b, vector::CombiningKind::ADD, whole);
                Value scale =
                    arith::ConstantOp::create(b, b.getI32IntegerAttr(-offset));
                return arith::MulIOp::create(b, sum, scale);
              };
              Value starts = vecConst(b, i32x8, b.getI32IntegerAttr(0));
              if (per16) {
                for (int64_t h = 0; h < 2; ++h)
                  starts = vector::InsertOp::create(b, startOf(sums[h]), starts,
                                                    ArrayRef<int64_t>{4 * h});
              } else {
                starts = vector::InsertOp::create(
                    b, startOf(arith::AddIOp::create(b, sums[0], sums[1])),
                    starts, ArrayRef<int64_t>{0});
              }
              Value scale = arith::DivFOp::create(b, d, constF32(b, 256.0f));
              storeBytes(starts, 128);
              storeBytes(
                  vector::BroadcastOp::create(
                      b, VectorType::get({kBlockLanes}, b.getF32Type()), scale),
                  192);
            });
  });
  func::ReturnOp::create(b);
  return func;
}

namespace {
/// Where a pair of blocks of 32 sits in Q6_K's super-block of 256 (two
/// halves of 128: ql[64], then qh[32] of each half; sc[16]; f16 d at 208):
/// the super-block's first byte, the half, and the first of the pair's two
/// quarters of the half (0 or 2).
struct Q6KPair {
  IndexExpr base, half, quarter;
};

Q6KPair q6kPair(Value pair) {
  IndexExpr p(pair);
  return {p / 4 * 210, p % 4 / 2, p % 2 * 2};
}

/// Q6_K's 6-bit q (weight q − 32) of a pair of blocks: element l of quarter
/// i takes the low (i < 2) or high nibble of ql[32 · (i % 2) + l] and bits
/// 2i, 2i + 1 of qh[l], as WeightRead.cpp's dequantizer reads them. The
/// pair's two quarters use ql[0, 64) of the half, one nibble for both, and
/// the half's 32 bytes of qh twice, shifted by 2i and 2i + 2.
Value q6kWeightPair(ImplicitLocOpBuilder &b, Value w, Value row, Value pair) {
  auto i8x64 = VectorType::get({64}, b.getI8Type());
  auto i64x8 = VectorType::get({8}, b.getI64Type());
  Q6KPair at = q6kPair(pair);
  Value ql = vector::LoadOp::create(
      b, i8x64, w, ValueRange{row, (at.base + at.half * 64).emit(b)});
  // quarter 0: shift 0 (low nibbles); quarter 2: shift 4 (high nibbles).
  Value nibbleShift = vector::BroadcastOp::create(
      b, i64x8,
      arith::IndexCastOp::create(b, b.getI64Type(), (at.quarter * 2).emit(b)));
  Value low = vector::BitCastOp::create(b, i64x8, ql);
  low = arith::ShRUIOp::create(b, low, nibbleShift);
  low = vector::BitCastOp::create(b, i8x64, low);
  low = arith::AndIOp::create(b, low,
                              vecConst(b, i8x64, b.getI8IntegerAttr(0x0F)));
  Value qh = vector::LoadOp::create(
      b, VectorType::get({32}, b.getI8Type()), w,
      ValueRange{row, (at.base + 128 + at.half * 32).emit(b)});
  SmallVector<int64_t> twice;
  for (int64_t i = 0; i < 64; ++i)
    twice.push_back(i % 32);
  SmallVector<int64_t> secondQuarter = {0, 0, 0, 0, 2, 2, 2, 2};
  Value bitShift = arith::AddIOp::create(
      b, nibbleShift,
      arith::ConstantOp::create(
          b, i64x8, DenseElementsAttr::get(i64x8, ArrayRef(secondQuarter))));
  Value high = vector::ShuffleOp::create(b, qh, qh, twice);
  high = vector::BitCastOp::create(b, i64x8, high);
  high = arith::ShRUIOp::create(b, high, bitShift);
  high = arith::ShLIOp::create(b, high,
                               vecConst(b, i64x8, b.getI64IntegerAttr(4)));
  high = vector::BitCastOp::create(b, i8x64, high);
  high = arith::AndIOp::create(b, high,
                               vecConst(b, i8x64, b.getI8IntegerAttr(0x30)));
  return arith::OrIOp::create(b, low, high);
}

/// Q6_K's scales of a pair of blocks: d · sc of its four sub-blocks of 16
/// (sc[8 · half + 2 · quarter .. + 4)), each over its 4 lanes.
Value q6kScalePair(ImplicitLocOpBuilder &b, Value w, Value row, Value pair) {
  Q6KPair at = q6kPair(pair);
  Value sc = vector::LoadOp::create(
      b, VectorType::get({4}, b.getI8Type()), w,
      ValueRange{row, (at.base + 192 + at.half * 8 + at.quarter * 2).emit(b)});
  SmallVector<int64_t> spread;
  for (int64_t i = 0; i < 16; ++i)
    spread.push_back(i / 4);
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  Value scales = arith::SIToFPOp::create(
      b, f32x16, vector::ShuffleOp::create(b, sc, sc, spread));
  Value raw = vector::LoadOp::create(b, VectorType::get({2}, b.getI8Type()), w,
                                     ValueRange{row, (at.base + 208).emit(b)});
  Value half = vector::ExtractOp::create(
      b,
      vector::BitCastOp::create(b, VectorType::get({1}, b.getF16Type()), raw),
      ArrayRef<int64_t>{0});
  Value d = arith::ExtFOp::create(b, b.getF32Type(), half);
  return arith::MulFOp::create(b, vector::BroadcastOp::create(b, f32x16, d),
                               scales);
}

/// The weights of blocks `block` and `block + 1` of row `row` of the block
/// buffer `w` as vpdpbusd's unsigned operand (vector<64xi8>): Q4_0's
/// nibbles n (weight n − 8), Q8_0's bytes q + 128 (weight q), Q6_K's q
/// (weight q − 32); block `block` in bytes 0..31, element order.
Value loadInt8WeightPair(ImplicitLocOpBuilder &b, Value w, Type wType,
                         Value row, Value block) {
  auto quant = cast<sg::QuantType>(wType);
  if (quant.getEncoding() == "Q6_K")
    return q6kWeightPair(b, w, row, (IndexExpr(block) / 2).emit(b));
  int64_t bytes = quant.getBlockBytes();
  bool q4 = quant.getEncoding() == "Q4_0";
  // The integers of a block follow its f16 scale: 16 bytes of nibble pairs
  // (Q4_0) or 32 bytes (Q8_0).
  int64_t width = q4 ? 16 : 32;
  auto part = VectorType::get({width}, b.getI8Type());
  auto i8x64 = VectorType::get({64}, b.getI8Type());
  Value parts[2];
  for (int64_t i = 0; i < 2; ++i)
    parts[i] = vector::LoadOp::create(
        b, part, w,
        ValueRange{row, (IndexExpr(block) * bytes + (i * bytes + 2)).emit(b)});
  SmallVector<int64_t> order;
  if (!q4) {
    for (int64_t i = 0; i < 64; ++i)
      order.push_back(i);
    Value joined = vector::ShuffleOp::create(b, parts[0], parts[1], order);
    return arith::XOrIOp::create(
        b, joined,
        vecConst(b, i8x64, b.getI8IntegerAttr(static_cast<int8_t>(0x80))));
  }
  // Each block's 16 bytes twice, [b0, b0, b1, b1] in 16-byte lanes; the
  // second copy shifted right 4 bits (per 64-bit word: one vpsrlvq), then
  // the low nibbles kept: elements 0-15 are the low nibbles, 16-31 the high.
  for (int64_t copy = 0; copy < 4; ++copy)
    for (int64_t i = 0; i < 16; ++i)
      order.push_back((copy / 2) * 16 + i);
  Value twice = vector::ShuffleOp::create(b, parts[0], parts[1], order);
  auto i64x8 = VectorType::get({8}, b.getI64Type());
  SmallVector<int64_t> shifts = {0, 0, 4, 4, 0, 0, 4, 4};
  Value words = vector::BitCastOp::create(b, i64x8, twice);
  Value shifted = arith::ShRUIOp::create(
      b, words,
      arith::ConstantOp::create(
          b, i64x8, DenseElementsAttr::get(i64x8, ArrayRef(shifts))));
  Value nibbles = vector::BitCastOp::create(b, i8x64, shifted);
  return arith::AndIOp::create(b, nibbles,
                               vecConst(b, i8x64, b.getI8IntegerAttr(0x0F)));
}

/// The two blocks' scales as f32 over their lanes (vector<16xf32>): each
/// block's f16 over its 8 (Q4_0, Q8_0), or Q6_K's sub-block scales.
Value loadBlockScalePair(ImplicitLocOpBuilder &b, Value w, Type wType,
                         Value row, Value block) {
  StringRef encoding = cast<sg::QuantType>(wType).getEncoding();
  if (encoding == "Q6_K")
    return q6kScalePair(b, w, row, (IndexExpr(block) / 2).emit(b));
  int64_t bytes = cast<sg::QuantType>(wType).getBlockBytes();
  auto two = VectorType::get({2}, b.getI8Type());
  auto one = VectorType::get({1}, b.getF16Type());
  Value halves[2];
  for (int64_t i = 0; i < 2; ++i)
    halves[i] = vector::BitCastOp::create(
        b, one,
        vector::LoadOp::create(
            b, two, w,
            ValueRange{row, (IndexExpr(block) * bytes + i * bytes).emit(b)}));
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < 2 * kBlockLanes; ++i)
    order.push_back(i / kBlockLanes);
  Value spread = vector::ShuffleOp::create(b, halves[0], halves[1], order);
  return arith::ExtFOp::create(
      b, VectorType::get({2 * kBlockLanes}, b.getF32Type()), spread);
}

/// acc + f32(256 · Σ weights · high + Σ weights · low + start) · scales ·
/// (d / 256): token `s`'s products with the pair of blocks whose record is
/// `pair` (blocks 2 · pair and 2 · pair + 1).
Value emitInt8PairStep(ImplicitLocOpBuilder &b, Value records, Value s,
                       Value pair, Value weights, Value scales, Value acc) {
  auto i8x64 = VectorType::get({64}, b.getI8Type());
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto field = [&](int64_t at, VectorType type) -> Value {
    Value bytes = vector::LoadOp::create(
        b, i8x64, records,
        ValueRange{s, (IndexExpr(pair) * kInt8RecordBytes + at).emit(b)});
    return type == i8x64 ? bytes : vector::BitCastOp::create(b, type, bytes);
  };
  auto dot = [&](Value sum, Value digits) -> Value {
    return LLVM::CallIntrinsicOp::create(
               b, i32x16, b.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
               ValueRange{sum, weights, digits})
        .getResult(0);
  };
  Value zeroSums = vecConst(b, i32x16, b.getI32IntegerAttr(0));
  Value high = dot(zeroSums, field(0, i8x64));
  Value shifted = arith::ShLIOp::create(
      b, high, vecConst(b, i32x16, b.getI32IntegerAttr(8)));
  Value withStart = arith::AddIOp::create(b, shifted, field(128, i32x16));
  Value total = dot(withStart, field(64, i8x64));
  Value scale = field(192, f32x16);
  Value both = arith::MulFOp::create(b, scales, scale);
  return vector::FMAOp::create(b, arith::SIToFPOp::create(b, f32x16, total),
                               both, acc);
}

} // namespace

SmallVector<Value> linear::emitRowDotsInt8(ImplicitLocOpBuilder &b,
                                           Value records, Value w, Type wType,
                                           ValueRange rows, ValueRange tokens,
                                           int64_t k) {
  if (usesQ4Groups(wType, k))
    return emitRowDotsQ4Groups(b, records, w, wType, rows, tokens, k);
  auto quant = cast<sg::QuantType>(wType);
  constexpr int64_t kPositionsPerBlock = kBlock / 4;
  return emitChainedSums(
      b, k / 4, kLanes, kAccumulators, rows.size() * tokens.size(),
      [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes,
          ValueRange accs) -> SmallVector<Value> {
        if (lanes == 1)
          return SmallVector<Value>(accs);
        Value block = (IndexExpr(col) / kPositionsPerBlock).emit(b);
        Value pair = (IndexExpr(col) / (2 * kPositionsPerBlock)).emit(b);
        SmallVector<Value> out;
        for (auto [r, row] : llvm::enumerate(rows)) {
          Value weights = loadInt8WeightPair(b, w, wType, row, block);
          Value scales = loadBlockScalePair(b, w, wType, row, block);
          for (auto [t, s] : llvm::enumerate(tokens))
            out.push_back(emitInt8PairStep(b, records, s, pair, weights, scales,
                                           accs[r * tokens.size() + t]));
        }
        return out;
      },
      [&](ImplicitLocOpBuilder &b, Value col) {
        // A step's bytes of each row, 4 KiB ahead along it (into the next
        // row near its end: the rows are one stream). A step starts a
        // whole block of the encoding (4 · col elements in; 256, a K-quant
        // super-block, a step).
        Value column = (IndexExpr(col) * 4).emit(b);
        IndexExpr byte = IndexExpr(weightBufferColumn(b, wType, column)) +
                         kInt8PrefetchBytes;
        int64_t stepBytes = quant.getRowBytes(4 * kLanes * kAccumulators);
        for (Value row : rows)
          for (int64_t line = 0; line < stepBytes; line += 64)
            memref::PrefetchOp::create(
                b, w, ValueRange{row, (byte + line).emit(b)},
                /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
      });
}
