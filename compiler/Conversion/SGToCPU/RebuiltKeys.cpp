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

void attention::emitRebuiltKey(ImplicitLocOpBuilder &b, const RebuiltKeys &keys,
                               int64_t d, Value v, ValueRange vIdx, Value pos,
                               Value key, ValueRange keyIdx, Type ct) {
  // key = round(V · w): k_norm of the raw projection, from the rounded V.
  Value one = constF32(b, 1.0f);
  emitRowChunks(b, d, [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
    Value x = emitRowLoad(b, v, vIdx, col, lanes);
    Value w = emitRowLoad(b, keys.weight, ValueRange{}, col, lanes);
    emitRowStore(b, emitNormalize(b, x, one, w, /*plusOne=*/false, ct), key,
                 keyIdx, col);
  });
  // The rotation of pairs (k, k + d/2) for the rotated frequencies (the
  // others have inv_freq 0: cos 1, sin 0, the pair unchanged).
  Value pf = arith::UIToFPOp::create(
      b, b.getF32Type(),
      Value(arith::IndexCastOp::create(b, b.getI64Type(), pos)));
  Value half = constIndex(b, d / 2);
  emitRowChunks(
      b, keys.rotated, [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
        Value f = emitRowLoad(b, keys.invFreq, ValueRange{}, col, lanes);
        Value p = lanes > 1
                      ? Value(vector::BroadcastOp::create(b, f.getType(), pf))
                      : pf;
        auto [cosA, sinA] = emitCosSin(b, arith::MulFOp::create(b, p, f));
        Value cosR = toF32(b, roundTo(b, cosA, ct));
        Value sinR = toF32(b, roundTo(b, sinA, ct));
        Value col2 = arith::AddIOp::create(b, col, half);
        Value lo = toF32(b, emitRowLoad(b, key, keyIdx, col, lanes));
        Value hi = toF32(b, emitRowLoad(b, key, keyIdx, col2, lanes));
        auto [yLo, yHi] = emitRotatePair(b, lo, hi, cosR, sinR, ct);
        emitRowStore(b, yLo, key, keyIdx, col);
        emitRowStore(b, yHi, key, keyIdx, col2);
      });
}

void attention::emitRebuiltKeyScores(
    ImplicitLocOpBuilder &b, const RebuiltKeys &keys,
    const RebuiltKeyLoops &loops,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value, Value, Value)>
        score,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, Value, Value)>
        attend,
    RowSumFn sumRow) {
  auto [d, group, ct, cache, pos0, tokens, capacity, headBegin, headEnd] =
      loops;
  Value zero = constIndex(b, 0), one = constIndex(b, 1);
  // A block's scores take at most kScoreBytes (whole rows of the cache's
  // length), 1 to kRows rows.
  constexpr int64_t kRows = 16, kScoreBytes = 16 << 20;
  Value groupIdx = constIndex(b, group);
  Value rowBytes = (IndexExpr(capacity) * (4 * group)).emit(b);
  // min(tokens, max(1, min(kRows, kScoreBytes / rowBytes))).
  Value fit = arith::DivUIOp::create(b, constIndex(b, kScoreBytes), rowBytes);
  Value blockRows = arith::MinUIOp::create(b, constIndex(b, kRows), fit);
  blockRows = arith::MaxUIOp::create(b, one, blockRows);
  blockRows = arith::MinUIOp::create(b, tokens, blockRows);
  Value blockScores = memref::AllocOp::create(
      b,
      MemRefType::get({ShapedType::kDynamic, group, ShapedType::kDynamic},
                      b.getF32Type()),
      ValueRange{blockRows, capacity}, b.getI64IntegerAttr(64));
  Value key = memref::AllocOp::create(b, MemRefType::get({d}, ct), ValueRange{},
                                      b.getI64IntegerAttr(64));
  Value gEnd = arith::CeilDivUIOp::create(b, headEnd, groupIdx);
  Value blocks = arith::CeilDivUIOp::create(b, tokens, blockRows);
  emitFor(
      b, (IndexExpr(headBegin) / group).emit(b), gEnd,
      [&](ImplicitLocOpBuilder &b, Value g) {
        Value first = (IndexExpr(g) * group).emit(b);
        Value hLo = arith::MaxUIOp::create(b, headBegin, first);
        Value hHi = arith::MinUIOp::create(b, headEnd,
                                           (IndexExpr(first) + group).emit(b));
        emitFor(b, zero, blocks, [&](ImplicitLocOpBuilder &b, Value blk) {
          Value iLo = arith::MulIOp::create(b, blk, blockRows);
          Value iHi = arith::MinUIOp::create(
              b, tokens, (IndexExpr(iLo) + blockRows).emit(b));
          // Full layers: the cached keys are positions [0, pos0), slot =
          // position.
          emitFor(b, zero, pos0, [&](ImplicitLocOpBuilder &b, Value t) {
            emitRebuiltKey(b, keys, d, cache, ValueRange{t, g}, t, key,
                           ValueRange{}, ct);
            emitFor(b, iLo, iHi, [&](ImplicitLocOpBuilder &b, Value i) {
              Value r = (IndexExpr(i) - iLo).emit(b);
              emitFor(b, hLo, hHi, [&](ImplicitLocOpBuilder &b, Value h) {
                Value hl = (IndexExpr(h) - first).emit(b);
                memref::StoreOp::create(b, score(b, i, h, key), blockScores,
                                        ValueRange{r, hl, t});
              });
            });
          });
          emitFor(b, iLo, iHi, [&](ImplicitLocOpBuilder &b, Value i) {
            Value r = (IndexExpr(i) - iLo).emit(b);
            // The scores row of (row i, head first + hl).
            auto rowOf = [&](ImplicitLocOpBuilder &b,
                             OpFoldResult hl) -> Value {
              auto rowType = MemRefType::get(
                  {ShapedType::kDynamic}, b.getF32Type(),
                  StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                         {1}));
              return memref::SubViewOp::create(
                  b, rowType, blockScores,
                  ArrayRef<OpFoldResult>{r, hl, b.getIndexAttr(0)},
                  ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                         capacity},
                  ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                         b.getIndexAttr(1)});
            };
            emitFor(b, hLo, hHi, [&](ImplicitLocOpBuilder &b, Value h) {
              Value hl = (IndexExpr(h) - first).emit(b);
              attend(b, i, h, rowOf(b, hl));
            });
            if (sumRow)
              sumRow(b, i, g, first, hLo, hHi,
                     [&](ImplicitLocOpBuilder &b, int64_t k) {
                       return rowOf(b, b.getIndexAttr(k));
                     });
          });
        });
      });
  memref::DeallocOp::create(b, key);
  memref::DeallocOp::create(b, blockScores);
}
