//===- Int16Tiles.cpp - Q4_0 prefill tiles on 16-bit activations ---------===//
//
// Part of sgc. See Int16Tiles.h. The tile has the bf16 tiles' shape (12
// tokens x 16 rows, one 64-byte panel load a K pair feeding a broadcast
// token each), with 12 i32 sums of the current block next to the 12 f32
// accumulators. Against the bf16 tiles on FMAs (26 operations a K pair)
// it issues 13 a pair and 3 a token a block: 1.7x fewer on Intel
// Emerald Rapids, where vpdpwssd issues as fast as an FMA.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Int16Tiles.h"
#include "compiler/Conversion/SGToCPU/Int8Dot.h"
#include "compiler/Conversion/SGToCPU/LinearSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;

namespace {
constexpr int64_t kBlockPairs = kQ4_0Block / 2;
constexpr int64_t kGroupBlocks = kQ4GroupElements / kQ4_0Block;

/// The 4 bytes at records[s, at] as one `type` scalar, broadcast to 16 lanes.
Value broadcastRecordWord(ImplicitLocOpBuilder &b, Value records, Value s,
                          Value at, Type type) {
  Value word = vector::ExtractOp::create(
      b, loadRecordBytes(b, records, s, at, VectorType::get({1}, type)),
      ArrayRef<int64_t>{0});
  return vector::BroadcastOp::create(b, VectorType::get({kTileRows}, type),
                                     word);
}

/// Byte offset, within a group's record, of K pair m (0-15) of block jb:
/// x_lo holds each block's elements 0-15, x_hi (64 bytes on) 16-31.
IndexExpr recordPairAt(IndexExpr group, IndexExpr jb, int64_t m) {
  int64_t half = m < kBlockPairs / 2 ? 4 * m : 64 + 4 * (m - kBlockPairs / 2);
  return group * kQ4GroupRecordBytes + jb / 2 * kQ4PairRecordBytes +
         jb % 2 * 32 + half;
}
} // namespace

bool linear::usesInt16Tiles(Type wType, int64_t k) {
  auto quant = dyn_cast<sg::QuantType>(wType);
  return quant && quant.getEncoding() == "Q4_0" && usesQ4Groups(wType, k);
}

Int16Panel linear::allocInt16Panel(ImplicitLocOpBuilder &b, Value numBlocks,
                                   int64_t k) {
  auto alloc = [&](Type element, int64_t perBlock) -> Value {
    return memref::AllocOp::create(
        b, MemRefType::get({ShapedType::kDynamic, kTileRows}, element),
        ValueRange{(IndexExpr(numBlocks) * perBlock).emit(b)},
        b.getI64IntegerAttr(64));
  };
  return {alloc(b.getI32Type(), k / 2), alloc(b.getF32Type(), k / kQ4_0Block)};
}

void linear::emitPackInt16Panel(ImplicitLocOpBuilder &b, Value w, Value n0,
                                Value hi, const Int16Panel &panel, Value nb,
                                int64_t k) {
  static_assert(kTileRows == 16 && kBlockPairs == 16,
                "a block of the panel is two 8 x 8 transposes of 8 rows");
  auto i8x16 = VectorType::get({16}, b.getI8Type());
  auto i16x32 = VectorType::get({32}, b.getI16Type());
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  Value zero = constIndex(b, 0);
  SmallVector<Value> rows, valid;
  for (int64_t j = 0; j < kTileRows; ++j) {
    rows.push_back((IndexExpr(n0) + j).emit(b));
    valid.push_back(
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, rows.back(), hi));
  }
  IndexExpr pairBase = IndexExpr(nb) * (k / 2);
  IndexExpr scaleBase = IndexExpr(nb) * (k / kQ4_0Block);
  emitFor(
      b, zero, constIndex(b, k / kQ4_0Block),
      [&](ImplicitLocOpBuilder &b, Value c) {
        IndexExpr at = IndexExpr(c) * kQ4_0BlockBytes;
        // Row j's block c as 16 pairs of q − 8 (zero past `hi`), and its d.
        SmallVector<Value> pairs;
        for (int64_t j = 0; j < kTileRows; ++j) {
          Value row = rows[j];
          auto packed = scf::IfOp::create(
              b, valid[j], implicitLoc([&](ImplicitLocOpBuilder &b) {
                Value bytes = vector::LoadOp::create(
                    b, i8x16, w, ValueRange{row, (at + 2).emit(b)});
                Value low = arith::AndIOp::create(
                    b, bytes, vecConst(b, i8x16, b.getI8IntegerAttr(15)));
                Value high = arith::ShRUIOp::create(
                    b, bytes, vecConst(b, i8x16, b.getI8IntegerAttr(4)));
                SmallVector<int64_t> inOrder;
                for (int64_t i = 0; i < kQ4_0Block; ++i)
                  inOrder.push_back(i);
                Value nibbles =
                    vector::ShuffleOp::create(b, low, high, inOrder);
                Value q = arith::SubIOp::create(
                    b, arith::ExtUIOp::create(b, i16x32, nibbles),
                    vecConst(b, i16x32, b.getI16IntegerAttr(8)));
                Value d = vector::LoadOp::create(
                    b, VectorType::get({2}, b.getI8Type()), w,
                    ValueRange{row, at.emit(b)});
                d = vector::ExtractOp::create(
                    b,
                    vector::BitCastOp::create(
                        b, VectorType::get({1}, b.getF16Type()), d),
                    ArrayRef<int64_t>{0});
                scf::YieldOp::create(
                    b, ValueRange{vector::BitCastOp::create(b, i32x16, q),
                                  arith::ExtFOp::create(b, b.getF32Type(), d)});
              }),
              implicitLoc([&](ImplicitLocOpBuilder &b) {
                scf::YieldOp::create(
                    b, ValueRange{vecConst(b, i32x16, b.getI32IntegerAttr(0)),
                                  constF32(b, 0.0f)});
              }));
          pairs.push_back(packed.getResult(0));
          memref::StoreOp::create(
              b, packed.getResult(1), panel.scales,
              ValueRange{(scaleBase + c).emit(b), constIndex(b, j)});
        }
        // Pairs 8h .. 8h + 8 of rows 8r .. 8r + 8, transposed: each store
        // writes 8 rows' pair p (32 contiguous bytes).
        IndexExpr first = pairBase + IndexExpr(c) * kBlockPairs;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t h = 0; h < 2; ++h) {
            SmallVector<Value> eight;
            for (int64_t j = 8 * r; j < 8 * r + 8; ++j)
              eight.push_back(vector::ExtractStridedSliceOp::create(
                  b, pairs[j], ArrayRef<int64_t>{8 * h}, ArrayRef<int64_t>{8},
                  ArrayRef<int64_t>{1}));
            SmallVector<Value> cols = emitTranspose8x8(b, eight);
            for (int64_t p = 0; p < 8; ++p)
              vector::StoreOp::create(b, cols[p], panel.pairs,
                                      ValueRange{(first + (8 * h + p)).emit(b),
                                                 constIndex(b, 8 * r)});
          }
      });
}

SmallVector<Value> linear::emitInt16Tile(ImplicitLocOpBuilder &b, Value records,
                                         const Int16Panel &panel, Value nb,
                                         Value t0, int64_t k) {
  auto f32x16 = VectorType::get({kTileRows}, b.getF32Type());
  auto i32x16 = VectorType::get({kTileRows}, b.getI32Type());
  auto i16x32 = VectorType::get({2 * kTileRows}, b.getI16Type());
  SmallVector<Value> tokens;
  for (int64_t i = 0; i < kDotTileTokens; ++i)
    tokens.push_back((IndexExpr(t0) + i).emit(b));
  Value zeroSums = vecConst(b, i32x16, b.getI32IntegerAttr(0));
  SmallVector<Value> inits(kDotTileTokens,
                           vecConst(b, f32x16, b.getF32FloatAttr(0.0f)));
  IndexExpr pairBase = IndexExpr(nb) * (k / 2);
  IndexExpr scaleBase = IndexExpr(nb) * (k / kQ4_0Block);
  auto blocks = scf::ForOp::create(
      b, constIndex(b, 0), constIndex(b, k / kQ4_0Block), constIndex(b, 1),
      inits,
      implicitLoc([&](ImplicitLocOpBuilder &b, Value c, ValueRange iter) {
        SmallVector<Value> accs(iter);
        IndexExpr group = IndexExpr(c) / kGroupBlocks;
        IndexExpr jb = IndexExpr(c) % kGroupBlocks;
        SmallVector<Value> sums(kDotTileTokens, zeroSums);
        IndexExpr first = pairBase + IndexExpr(c) * kBlockPairs;
        for (int64_t m = 0; m < kBlockPairs; ++m) {
          Value wv = vector::BitCastOp::create(
              b, i16x32,
              vector::LoadOp::create(
                  b, i32x16, panel.pairs,
                  ValueRange{(first + m).emit(b), constIndex(b, 0)}));
          Value at = recordPairAt(group, jb, m).emit(b);
          for (auto [i, s] : llvm::enumerate(tokens)) {
            // The broadcast pair last: it folds into the vpdpwssd as an
            // embedded broadcast ({1to16}).
            Value xv = vector::BitCastOp::create(
                b, i16x32,
                broadcastRecordWord(b, records, s, at, b.getI32Type()));
            sums[i] =
                LLVM::CallIntrinsicOp::create(
                    b, i32x16, b.getStringAttr("llvm.x86.avx512.vpdpwssd.512"),
                    ValueRange{sums[i], wv, xv})
                    .getResult(0);
          }
        }
        Value d = vector::LoadOp::create(
            b, f32x16, panel.scales,
            ValueRange{(scaleBase + c).emit(b), constIndex(b, 0)});
        Value saAt =
            (group * kQ4GroupRecordBytes + kQ4ScaleField + jb * 4).emit(b);
        for (auto [i, s] : llvm::enumerate(tokens)) {
          Value sa = broadcastRecordWord(b, records, s, saAt, b.getF32Type());
          Value scale = arith::MulFOp::create(b, d, sa);
          accs[i] = vector::FMAOp::create(
              b, arith::SIToFPOp::create(b, f32x16, sums[i]), scale, accs[i]);
        }
        scf::YieldOp::create(b, accs);
      }));
  return SmallVector<Value>(blocks.getResults());
}
