//===- Int8Q4Groups.cpp - 4-bit decode rows on 16-bit activations ---------===//
//
// Part of sgc. Q4_0's and Q4_K's decode rows where K is a multiple of 256
// (Int8Dot.h, usesQ4Groups). The two-digit records of the other encodings cost
// a pair of blocks 15 vector instructions and four 64-byte record loads; on one
// Zen 4 core that, not DRAM, set the speed (15 GB/s of blocks, 9-11 at K past
// 10,240). Here:
//   - an activation is one i16, x = sa · q with q = round-to-even(x · 32767
//     / max|x of its block|) (2^-16 of the block's maximum, as fine as the
//     two digits), multiplied by vpdpwssd against the nibbles widened to
//     words: vpermb copies each byte of the pair into both halves of a word,
//     then `& 15` is the low nibble and `>> 12` the high one;
//   - Q4_0's zero point leaves the integer sums: Σ_block dw · (−8 · sa · Σ q)
//     is one FMA of 8 blocks' weight scales against a record field of
//     −8 · sa · Σ q (Q4_K's minimums likewise against −sa · Σ q);
//   - the weight scales of a group of 4 pairs are gathered into one vector,
//     converted and multiplied by the activation scales once, and spread to
//     each pair's lanes by one vpermps;
//   - the weights are prefetched to L2 only (prefetcht1) on AMD Zen, so the
//     records stay in L1 at every K; into L1 elsewhere (Lowering.h,
//     kPrefetchToL1Flag).
// The rows of bench/gemv's C prototype: 16-18 GB/s at every seed shape on
// one core, where the two-digit rows moved 9-15.
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

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;

namespace {
constexpr int64_t kBlock = kQ4_0Block;
constexpr int64_t kBlockBytes = kQ4_0BlockBytes;
/// A group: 4 pairs of blocks, 256 weights, 144 bytes of a weight row.
constexpr int64_t kGroupBlocks = 8;
constexpr int64_t kGroupPairs = 4;
constexpr int64_t kGroupWeightBytes = kGroupBlocks * kBlockBytes;
/// A group's record: per pair, x_lo (i16 x 32: each block's elements 0-15)
/// and x_hi (elements 16-31); then the 8 blocks' sa (f32) and −8 · sa · Σ q
/// (f32).
constexpr int64_t kPairRecordBytes = kQ4PairRecordBytes;
constexpr int64_t kScaleField = kQ4ScaleField;
static_assert(kScaleField == kGroupPairs * kPairRecordBytes);
constexpr int64_t kStartField = kScaleField + 4 * kGroupBlocks;
/// How far ahead along the weight stream the rows prefetch into L2.
constexpr int64_t kPrefetchBytes = 8192;

bool isQ4K(Type wType) {
  return cast<sg::QuantType>(wType).getEncoding() == "Q4_K";
}

/// A group's weights as vpdpwssd's word operands, pair p's in lows[p] (each
/// block's elements 0-15: x_lo's order) and highs[p] (16-31); the 8 blocks'
/// scales, and what multiplies the records' −z · sa · Σ q.
struct GroupWeights {
  Value lows[kGroupPairs], highs[kGroupPairs];
  Value scales, zeroScales;
};

/// Each byte of `bytes` at `from` twice, one word each (vpermb).
Value bytesAsWords(ImplicitLocOpBuilder &b, Value bytes,
                   ArrayRef<int64_t> from) {
  SmallVector<int64_t> twice;
  for (int64_t i : from)
    twice.append(2, i);
  return vector::BitCastOp::create(
      b, VectorType::get({32}, b.getI16Type()),
      vector::ShuffleOp::create(b, bytes, bytes, twice));
}

/// Q4_0: per pair, the 36 bytes of a 64-byte load (the rest masked off, so
/// the tensor's last pair never reads past it); a word holding its byte
/// twice is `& 15` the low nibble (elements 0-15) and `>> 12` the high
/// (16-31). The f16 scales are words 0 and 9 of each pair's load.
GroupWeights q4_0Group(ImplicitLocOpBuilder &b, Value w, Value row, Value at) {
  auto i8x64 = VectorType::get({64}, b.getI8Type());
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  SmallVector<bool> pairBytes(64, false);
  std::fill_n(pairBytes.begin(), 2 * kBlockBytes, true);
  auto i1x64 = VectorType::get({64}, b.getI1Type());
  Value mask = arith::ConstantOp::create(
      b, i1x64, DenseElementsAttr::get(i1x64, ArrayRef(pairBytes)));
  Value zeroBytes = vecConst(b, i8x64, b.getI8IntegerAttr(0));
  SmallVector<int64_t> nibbleBytes;
  for (int64_t i = 0; i < 32; ++i)
    nibbleBytes.push_back(2 + kBlockBytes * (i / 16) + i % 16);
  GroupWeights group;
  Value raws[kGroupPairs];
  for (int64_t p = 0; p < kGroupPairs; ++p) {
    raws[p] = vector::MaskedLoadOp::create(
        b, i8x64, w,
        ValueRange{row, (IndexExpr(at) + 2 * kBlockBytes * p).emit(b)}, mask,
        zeroBytes);
    Value words = bytesAsWords(b, raws[p], nibbleBytes);
    group.lows[p] = arith::AndIOp::create(
        b, words, vecConst(b, i16x32, b.getI16IntegerAttr(15)));
    group.highs[p] = arith::ShRUIOp::create(
        b, words, vecConst(b, i16x32, b.getI16IntegerAttr(12)));
  }
  auto scalesOf = [&](Value first, Value second) -> Value {
    Value firstWords = vector::BitCastOp::create(b, i16x32, first);
    Value secondWords = vector::BitCastOp::create(b, i16x32, second);
    return vector::ShuffleOp::create(b, firstWords, secondWords,
                                     ArrayRef<int64_t>{0, 9, 32, 41});
  };
  Value firstScales = scalesOf(raws[0], raws[1]);
  Value secondScales = scalesOf(raws[2], raws[3]);
  Value scaleWords = vector::ShuffleOp::create(
      b, firstScales, secondScales, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  Value halfScales = vector::BitCastOp::create(
      b, VectorType::get({8}, b.getF16Type()), scaleWords);
  group.scales = arith::ExtFOp::create(b, VectorType::get({8}, b.getF32Type()),
                                       halfScales);
  group.zeroScales = group.scales;
  return group;
}

/// Q4_K: the group is a super-block; pair p is its chunk p (qs[32 p, 32 p +
/// 32) at byte 16 + 32 p: the low nibbles are block 2p, the high block 2p +
/// 1). Bytes 0-15 of the chunk twice a word make lows[p] (words 0-15 `& 15`,
/// block 2p's elements 0-15; words 16-31 `>> 12`, block 2p + 1's), bytes
/// 16-31 highs[p]. The scales are d · sc, the minimums dmin · m.
GroupWeights q4kGroup(ImplicitLocOpBuilder &b, Value w, Value row, Value at) {
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  SmallVector<int16_t> shifts(32, 0);
  std::fill(shifts.begin() + 16, shifts.end(), 12);
  Value byHalf = arith::ConstantOp::create(
      b, i16x32, DenseElementsAttr::get(i16x32, ArrayRef(shifts)));
  Value low15 = vecConst(b, i16x32, b.getI16IntegerAttr(15));
  auto nibbles = [&](Value bytes, int64_t first) -> Value {
    SmallVector<int64_t> from;
    for (int64_t i = 0; i < 32; ++i)
      from.push_back(first + i % 16);
    return arith::AndIOp::create(
        b, arith::ShRUIOp::create(b, bytesAsWords(b, bytes, from), byHalf),
        low15);
  };
  GroupWeights group;
  for (int64_t p = 0; p < kGroupPairs; ++p) {
    Value bytes = vector::LoadOp::create(
        b, VectorType::get({32}, b.getI8Type()), w,
        ValueRange{row, (IndexExpr(at) + (16 + 32 * p)).emit(b)});
    group.lows[p] = nibbles(bytes, 0);
    group.highs[p] = nibbles(bytes, 16);
  }
  Value both = loadQ4KScalesAndMins(b, w, row, at);
  group.scales = vector::ShuffleOp::create(
      b, both, both, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  group.zeroScales = vector::ShuffleOp::create(
      b, both, both, ArrayRef<int64_t>{8, 9, 10, 11, 12, 13, 14, 15});
  return group;
}
} // namespace

bool linear::usesQ4Groups(Type wType, int64_t k) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  return quant &&
         (quant.getEncoding() == "Q4_0" || quant.getEncoding() == "Q4_K") &&
         k % kQ4GroupElements == 0;
}

func::FuncOp linear::getOrCreateQ4GroupRows(OpBuilder &outer, ModuleOp module,
                                            int64_t k, Type wType) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  bool q4k = isQ4K(wType);
  std::string name =
      llvm::formatv("sgc_quant_rows_{0}_{1}", k, q4k ? "q4kg" : "q4g");
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  SmallVector<Type> args = {f32RowsType(b.getContext(), k),
                            int8ActivationType(b.getContext(), k)};
  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func = createPrivateFunction(b, module, name, args);
  Value xs = func.getArgument(0), records = func.getArgument(1);
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  auto i16x16 = VectorType::get({16}, b.getI16Type());
  Value zero = constIndex(b, 0);
  Value tokens = dimOf(b, records, 0);
  emitFor(b, zero, tokens, [&](ImplicitLocOpBuilder &b, Value s) {
    Value blocks = constIndex(b, k / kBlock);
    emitFor(b, zero, blocks, [&](ImplicitLocOpBuilder &b, Value j) {
      // Block j: group j / 8, its place jb = j % 8 there, pair jb / 2.
      IndexExpr block(j);
      IndexExpr jb = block % kGroupBlocks;
      IndexExpr group = block / kGroupBlocks * kQ4GroupRecordBytes;
      IndexExpr values = group + jb / 2 * kPairRecordBytes + jb % 2 * 32;
      Value halves[2];
      for (int64_t h = 0; h < 2; ++h)
        halves[h] = vector::LoadOp::create(
            b, f32x16, xs, ValueRange{s, (block * kBlock + 16 * h).emit(b)});
      auto [sa, inverse] = emitBlockScale(b, halves, 32767.0f);
      Value byInverse = vector::BroadcastOp::create(b, f32x16, inverse);
      Value limit = vecConst(b, i32x16, b.getI32IntegerAttr(32767));
      Value negLimit = vecConst(b, i32x16, b.getI32IntegerAttr(-32767));
      Value qs[2];
      for (int64_t h = 0; h < 2; ++h) {
        // |x · inverse| <= 32767 up to rounding; the clamp keeps it an i16.
        Value q = arith::FPToSIOp::create(
            b, i32x16,
            math::RoundEvenOp::create(
                b, arith::MulFOp::create(b, halves[h], byInverse)));
        q = arith::MaxSIOp::create(b, arith::MinSIOp::create(b, q, limit),
                                   negLimit);
        qs[h] = q;
        Value at = (values + 64 * h).emit(b);
        storeRecordBytes(b, records, s, at,
                         arith::TruncIOp::create(b, i16x16, q));
      }
      Value sum =
          vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                      arith::AddIOp::create(b, qs[0], qs[1]));
      Value start = arith::SIToFPOp::create(b, b.getF32Type(), sum);
      start = arith::MulFOp::create(b, start, sa);
      start = arith::MulFOp::create(b, start, constF32(b, q4k ? -1.0f : -8.0f));
      auto f32x1 = VectorType::get({1}, b.getF32Type());
      IndexExpr slot = group + jb * 4;
      Value scaleAt = (slot + kScaleField).emit(b);
      storeRecordBytes(b, records, s, scaleAt,
                       vector::BroadcastOp::create(b, f32x1, sa));
      Value startAt = (slot + kStartField).emit(b);
      storeRecordBytes(b, records, s, startAt,
                       vector::BroadcastOp::create(b, f32x1, start));
    });
  });
  func::ReturnOp::create(b);
  return func;
}

SmallVector<Value> linear::emitRowDotsQ4Groups(ImplicitLocOpBuilder &b,
                                               Value records, Value w,
                                               Type wType, ValueRange rows,
                                               ValueRange tokens, int64_t k) {
  bool q4k = isQ4K(wType);
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  auto f32x8 = VectorType::get({8}, b.getF32Type());
  // Per row and token: two chains of pair sums (even and odd pairs) and the
  // 8 lanes of the zero point's sums.
  constexpr int64_t kCarried = 3;
  int64_t count = rows.size() * tokens.size();
  SmallVector<Value> inits;
  for (int64_t i = 0; i < count; ++i) {
    inits.push_back(vecConst(b, f32x16, b.getF32FloatAttr(0.0f)));
    inits.push_back(vecConst(b, f32x16, b.getF32FloatAttr(0.0f)));
    inits.push_back(vecConst(b, f32x8, b.getF32FloatAttr(0.0f)));
  }
  Value zeroSums = vecConst(b, i32x16, b.getI32IntegerAttr(0));
  auto dot = [&](Value sums, Value weights, Value xs) -> Value {
    return LLVM::CallIntrinsicOp::create(
               b, i32x16, b.getStringAttr("llvm.x86.avx512.vpdpwssd.512"),
               ValueRange{sums, weights, xs})
        .getResult(0);
  };

  Value toL1 =
      loadPrefetchToL1Flag(b, w.getParentRegion()->getParentOfType<ModuleOp>());
  Value zero = constIndex(b, 0);
  Value numGroups = constIndex(b, k / kQ4GroupElements);
  Value one = constIndex(b, 1);
  auto groups = scf::ForOp::create(
      b, zero, numGroups, one, inits,
      implicitLoc([&](ImplicitLocOpBuilder &b, Value g, ValueRange iter) {
        SmallVector<Value> accs(iter);
        IndexExpr group(g);
        Value weightAt = (group * kGroupWeightBytes).emit(b);
        IndexExpr recordAt = group * kQ4GroupRecordBytes;
        for (auto [r, row] : llvm::enumerate(rows)) {
          // The row's bytes 8 KiB ahead (past the row's end: the next rows,
          // one stream), into L1 or L2 as the variant's flag says.
          auto prefetch = [&](ImplicitLocOpBuilder &b, int64_t locality) {
            for (int64_t line = 0; line < kGroupWeightBytes; line += 64)
              memref::PrefetchOp::create(
                  b, w,
                  ValueRange{
                      row,
                      (IndexExpr(weightAt) + (kPrefetchBytes + line)).emit(b)},
                  /*isWrite=*/false, locality, /*isDataCache=*/true);
          };
          auto where = scf::IfOp::create(b, toL1, /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(where.thenBlock());
            prefetch(b, 3);
            b.setInsertionPointToStart(where.elseBlock());
            prefetch(b, 2);
          }
          GroupWeights group = q4k ? q4kGroup(b, w, row, weightAt)
                                   : q4_0Group(b, w, row, weightAt);
          Value *lows = group.lows, *highs = group.highs;
          Value scales = group.scales;
          for (auto [t, s] : llvm::enumerate(tokens)) {
            int64_t at = kCarried * (r * tokens.size() + t);
            Value both = arith::MulFOp::create(
                b, scales,
                loadRecordBytes(b, records, s, (recordAt + kScaleField).emit(b),
                                f32x8));
            accs[at + 2] = vector::FMAOp::create(
                b, group.zeroScales,
                loadRecordBytes(b, records, s, (recordAt + kStartField).emit(b),
                                f32x8),
                accs[at + 2]);
            for (int64_t p = 0; p < kGroupPairs; ++p) {
              IndexExpr pairAt = recordAt + kPairRecordBytes * p;
              Value sums =
                  dot(zeroSums, lows[p],
                      loadRecordBytes(b, records, s, pairAt.emit(b), i16x32));
              sums = dot(sums, highs[p],
                         loadRecordBytes(b, records, s, (pairAt + 64).emit(b),
                                         i16x32));
              SmallVector<int64_t> spread;
              for (int64_t i = 0; i < 16; ++i)
                spread.push_back(2 * p + i / 8);
              Value pairScales =
                  vector::ShuffleOp::create(b, both, both, spread);
              Value &acc = accs[at + p % 2];
              acc = vector::FMAOp::create(
                  b, arith::SIToFPOp::create(b, f32x16, sums), pairScales, acc);
            }
          }
        }
        scf::YieldOp::create(b, accs);
      }));
  ValueRange carried = groups.getResults();
  SmallVector<Value> out;
  for (int64_t i = 0; i < count; ++i) {
    Value pairs = vector::ReductionOp::create(
        b, vector::CombiningKind::ADD,
        arith::AddFOp::create(b, carried[kCarried * i],
                              carried[kCarried * i + 1]),
        arith::FastMathFlags::reassoc);
    Value starts = vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                               carried[kCarried * i + 2],
                                               arith::FastMathFlags::reassoc);
    out.push_back(arith::AddFOp::create(b, pairs, starts));
  }
  return out;
}
