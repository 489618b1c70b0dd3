//===- RebuiltKeys.cpp - keys rebuilt from a V-only cache -----------------===//
//
// Part of sgc. On Gemma 4's full layers K = V (SERVE.md §3): V is the
// weightless RMSNorm of the raw projection and the key is RoPE(V · w_k).
// Such a layer caches V once and the attention rebuilds the key of each
// cached position it reads: round(V · w_k), then the rotation of the chunk's
// keys (sg.norm_rope): cos and sin of the f32 angle position · inv_freq
// (Common/KeyRotation.cpp), rounded to the element type, each product
// rounded, each sum rounded.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/AttentionRows.h"
#include "compiler/Conversion/Common/KeyRotation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::attention;

void attention::emitRebuiltKey(OpBuilder &b, Location loc,
                               const RebuiltKeys &keys, int64_t d, Value v,
                               ValueRange vIdx, Value pos, Value key,
                               ValueRange keyIdx, Type ct) {
  // key = round(V · w): k_norm of the raw projection, from the rounded V.
  Value one = constF32(b, loc, 1.0f);
  emitRowChunks(b, loc, d, [&](OpBuilder &b, Location loc, Value col,
                               int64_t lanes) {
    Value x = emitRowLoad(b, loc, v, vIdx, col, lanes);
    Value w = emitRowLoad(b, loc, keys.weight, ValueRange{}, col, lanes);
    emitRowStore(b, loc, emitNormalize(b, loc, x, one, w, /*plusOne=*/false, ct),
                 key, keyIdx, col);
  });
  // The rotation of pairs (k, k + d/2) for the rotated frequencies (the
  // others have inv_freq 0: cos 1, sin 0, the pair unchanged).
  Value pf = arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), pos)));
  Value half = constIndex(b, loc, d / 2);
  emitRowChunks(b, loc, keys.rotated, [&](OpBuilder &b, Location loc,
                                          Value col, int64_t lanes) {
    Value f = emitRowLoad(b, loc, keys.invFreq, ValueRange{}, col, lanes);
    Value p = lanes > 1 ? Value(vector::BroadcastOp::create(b, loc, f.getType(), pf))
                        : pf;
    auto [cosA, sinA] = emitCosSin(b, loc, arith::MulFOp::create(b, loc, p, f));
    Value cosR = toF32(b, loc, roundTo(b, loc, cosA, ct));
    Value sinR = toF32(b, loc, roundTo(b, loc, sinA, ct));
    Value col2 = arith::AddIOp::create(b, loc, col, half);
    Value lo = toF32(b, loc, emitRowLoad(b, loc, key, keyIdx, col, lanes));
    Value hi = toF32(b, loc, emitRowLoad(b, loc, key, keyIdx, col2, lanes));
    auto [yLo, yHi] = emitRotatePair(b, loc, lo, hi, cosR, sinR, ct);
    emitRowStore(b, loc, yLo, key, keyIdx, col);
    emitRowStore(b, loc, yHi, key, keyIdx, col2);
  });
}

void attention::emitRebuiltKeyScores(
    OpBuilder &b, Location loc, const RebuiltKeys &keys,
    const RebuiltKeyLoops &loops,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value, Value)> score,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value, Value)>
        attend,
    RowSumFn sumRow) {
  auto [d, group, ct, cache, pos0, tokens, capacity, headBegin, headEnd] =
      loops;
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  // A block's scores take at most kScoreBytes (whole rows of the cache's
  // length), 1 to kRows rows.
  constexpr int64_t kRows = 16, kScoreBytes = 16 << 20;
  Value groupIdx = constIndex(b, loc, group);
  Value rowBytes = arith::MulIOp::create(b, loc, capacity,
                                         constIndex(b, loc, 4 * group));
  Value blockRows = arith::MinUIOp::create(
      b, loc, tokens,
      Value(arith::MaxUIOp::create(
          b, loc, one,
          Value(arith::MinUIOp::create(
              b, loc, constIndex(b, loc, kRows),
              Value(arith::DivUIOp::create(
                  b, loc, constIndex(b, loc, kScoreBytes),
                  rowBytes)))))));
  Value blockScores = memref::AllocOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic, group, ShapedType::kDynamic},
                      b.getF32Type()),
      ValueRange{blockRows, capacity}, b.getI64IntegerAttr(64));
  Value key = memref::AllocOp::create(b, loc, MemRefType::get({d}, ct),
                                      ValueRange{}, b.getI64IntegerAttr(64));
  Value gEnd = arith::CeilDivUIOp::create(b, loc, headEnd, groupIdx);
  Value blocks = arith::CeilDivUIOp::create(b, loc, tokens, blockRows);
  emitFor(b, loc, Value(arith::DivUIOp::create(b, loc, headBegin, groupIdx)),
          gEnd, [&](OpBuilder &b, Location loc, Value g) {
    Value first = arith::MulIOp::create(b, loc, g, groupIdx);
    Value hLo = arith::MaxUIOp::create(b, loc, headBegin, first);
    Value hHi = arith::MinUIOp::create(
        b, loc, headEnd, Value(arith::AddIOp::create(b, loc, first, groupIdx)));
    emitFor(b, loc, zero, blocks, [&](OpBuilder &b, Location loc, Value blk) {
      Value iLo = arith::MulIOp::create(b, loc, blk, blockRows);
      Value iHi = arith::MinUIOp::create(
          b, loc, tokens, Value(arith::AddIOp::create(b, loc, iLo, blockRows)));
      // Full layers: the cached keys are positions [0, pos0), slot = position.
      emitFor(b, loc, zero, pos0, [&](OpBuilder &b, Location loc, Value t) {
        emitRebuiltKey(b, loc, keys, d, cache, ValueRange{t, g}, t, key,
                       ValueRange{}, ct);
        emitFor(b, loc, iLo, iHi, [&](OpBuilder &b, Location loc, Value i) {
          Value r = arith::SubIOp::create(b, loc, i, iLo);
          emitFor(b, loc, hLo, hHi, [&](OpBuilder &b, Location loc, Value h) {
            Value hl = arith::SubIOp::create(b, loc, h, first);
            memref::StoreOp::create(b, loc, score(b, loc, i, h, key),
                                    blockScores, ValueRange{r, hl, t});
          });
        });
      });
      emitFor(b, loc, iLo, iHi, [&](OpBuilder &b, Location loc, Value i) {
        Value r = arith::SubIOp::create(b, loc, i, iLo);
        // The scores row of (row i, head first + hl).
        auto rowOf = [&](OpBuilder &b, Location loc, OpFoldResult hl) -> Value {
          auto rowType = MemRefType::get(
              {ShapedType::kDynamic}, b.getF32Type(),
              StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}));
          return memref::SubViewOp::create(
              b, loc, rowType, blockScores,
              ArrayRef<OpFoldResult>{r, hl, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                     capacity},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1)});
        };
        emitFor(b, loc, hLo, hHi, [&](OpBuilder &b, Location loc, Value h) {
          Value hl = arith::SubIOp::create(b, loc, h, first);
          attend(b, loc, i, h, rowOf(b, loc, hl));
        });
        if (sumRow)
          sumRow(b, loc, i, g, first, hLo, hHi,
                 [&](OpBuilder &b, Location loc, int64_t k) {
                   return rowOf(b, loc, b.getIndexAttr(k));
                 });
      });
    });
  });
  memref::DeallocOp::create(b, loc, key);
  memref::DeallocOp::create(b, loc, blockScores);
}
