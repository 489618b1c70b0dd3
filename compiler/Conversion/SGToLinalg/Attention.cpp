//===- Attention.cpp - attention over a KV cache, and the cache write -----===//
//
// Part of sgc. Query i of a chunk sits at p = pos0 + i. It sees the keys at
// positions j in [lo, p] with lo = max(0, p - window + 1) on sliding layers
// (0 on full layers): those before the chunk from the cache as it was before
// the chunk (ring slot j mod window, or slot j), the rest from the chunk.
// Masked keys contribute exp(-inf) = 0 in the reference, so visiting only the
// visible ones computes the same sums.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToLinalg/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

namespace {
/// What distinguishes the two attention ops.
struct AttnParams {
  Value q, k, v, kCache, vCache, pos0;
  /// Window for sliding layers, 0 for full ones.
  int64_t window;
  double scale;
};

/// Emits `acc' = acc + f32(a) * f32(b)` over d in [0, n), loads by `loadA`
/// and `loadB`, returning the f32 sum.
Value dot(OpBuilder &b, Location loc, Value n,
          llvm::function_ref<Value(OpBuilder &, Location, Value)> loadA,
          llvm::function_ref<Value(OpBuilder &, Location, Value)> loadB) {
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, n, one, ValueRange{constF32(b, loc, 0.0f)},
      [&](OpBuilder &b, Location loc, Value d, ValueRange acc) {
        Value prod = arith::MulFOp::create(b, loc, toF32(b, loc, loadA(b, loc, d)),
                                           toF32(b, loc, loadB(b, loc, d)));
        scf::YieldOp::create(b, loc,
                             Value(arith::AddFOp::create(b, loc, acc[0], prod)));
      });
  return loop.getResult(0);
}

/// `cond ? thenFn() : elseFn()` as an scf.if yielding one `type` value.
Value emitIfElse(OpBuilder &b, Location loc, Type type, Value cond,
                 llvm::function_ref<Value(OpBuilder &, Location)> thenFn,
                 llvm::function_ref<Value(OpBuilder &, Location)> elseFn) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, thenFn(b, loc));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, elseFn(b, loc));
  return ifOp.getResult(0);
}
} // namespace

static LogicalResult lowerAttention(Operation *op, const AttnParams &params,
                                    FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  Value q = state.lookup(params.q), k = state.lookup(params.k);
  Value v = state.lookup(params.v);
  Value kc = state.lookup(params.kCache), vc = state.lookup(params.vCache);
  Value out = state.bufferFor(loc, op->getResult(0));
  Type ct = cast<MemRefType>(out.getType()).getElementType();
  auto qType = cast<MemRefType>(q.getType());
  auto kcType = cast<MemRefType>(kc.getType());
  auto vType = cast<MemRefType>(v.getType());
  int64_t hq = qType.getDimSize(1), hkv = kcType.getDimSize(1);
  int64_t d = qType.getDimSize(2), dv = vType.getDimSize(2);
  int64_t slots = kcType.getDimSize(0);
  int64_t group = hq / hkv;
  bool ring = params.window > 0;

  // Scores of one (query, head): at most the cached span plus the chunk.
  Value tokens = dimOf(b, loc, q, 0);
  Value capacity = arith::AddIOp::create(
      b, loc, constIndex(b, loc, ring ? params.window : slots), tokens);
  auto scoresType = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Value scores = memref::AllocOp::create(b, loc, scoresType, ValueRange{capacity},
                                         b.getI64IntegerAttr(64));
  Value acc = memref::AllocOp::create(b, loc, MemRefType::get({dv}, b.getF32Type()),
                                      ValueRange{}, b.getI64IntegerAttr(64));

  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value pos0 = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                          state.lookup(params.pos0));
  Value dIdx = constIndex(b, loc, d), dvIdx = constIndex(b, loc, dv);
  Value scale = constF32(b, loc, static_cast<float>(params.scale));
  Value negInf = constF32(b, loc, -std::numeric_limits<float>::infinity());

  emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value i) {
    Value p = arith::AddIOp::create(b, loc, pos0, i);
    // lo = max(0, p - window + 1) on sliding layers.
    Value lo = zero;
    if (ring) {
      Value start = arith::SubIOp::create(
          b, loc, Value(arith::AddIOp::create(b, loc, p, one)),
          constIndex(b, loc, params.window));
      Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                             start, zero);
      lo = arith::SelectOp::create(b, loc, positive, start, zero);
    }
    // Keys lo..pos0-1 come from the cache, max(lo, pos0)..p from the chunk.
    Value numKeys = arith::SubIOp::create(
        b, loc, Value(arith::AddIOp::create(b, loc, p, one)), lo);
    Value windowIdx = constIndex(b, loc, params.window);

    emitFor(b, loc, zero, constIndex(b, loc, hq), [&](OpBuilder &b, Location loc, Value h) {
      Value g = arith::DivUIOp::create(b, loc, h, constIndex(b, loc, group));
      auto loadQ = [&](OpBuilder &b, Location loc, Value dd) -> Value {
        return memref::LoadOp::create(b, loc, q, ValueRange{i, h, dd});
      };
      // Pass 1: scores and their maximum.
      auto scoreLoop = scf::ForOp::create(
          b, loc, zero, numKeys, one, ValueRange{negInf},
          [&](OpBuilder &b, Location loc, Value t, ValueRange maxArg) {
            Value j = arith::AddIOp::create(b, loc, lo, t);
            Value fromCache = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, j, pos0);
            Value qk = emitIfElse(
                b, loc, b.getF32Type(), fromCache,
                [&](OpBuilder &b, Location loc) {
                  Value slot = ring ? Value(arith::RemUIOp::create(b, loc, j, windowIdx)) : j;
                  return dot(b, loc, dIdx, loadQ, [&](OpBuilder &b, Location loc, Value dd) {
                    return Value(memref::LoadOp::create(b, loc, kc, ValueRange{slot, g, dd}));
                  });
                },
                [&](OpBuilder &b, Location loc) {
                  Value row = arith::SubIOp::create(b, loc, j, pos0);
                  return dot(b, loc, dIdx, loadQ, [&](OpBuilder &b, Location loc, Value dd) {
                    return Value(memref::LoadOp::create(b, loc, k, ValueRange{row, g, dd}));
                  });
                });
            // The reference rounds q·k and the scaled score to its dtype.
            Value s = toF32(b, loc, roundTo(b, loc, qk, ct));
            s = toF32(b, loc, roundTo(b, loc, arith::MulFOp::create(b, loc, s, scale), ct));
            memref::StoreOp::create(b, loc, s, scores, ValueRange{t});
            scf::YieldOp::create(b, loc,
                                 Value(arith::MaximumFOp::create(b, loc, maxArg[0], s)));
          });
      Value maxScore = scoreLoop.getResult(0);
      // Pass 2: exponentials and their sum (softmax in f32).
      auto sumLoop = scf::ForOp::create(
          b, loc, zero, numKeys, one, ValueRange{constF32(b, loc, 0.0f)},
          [&](OpBuilder &b, Location loc, Value t, ValueRange sum) {
            Value s = memref::LoadOp::create(b, loc, scores, ValueRange{t});
            Value e = math::ExpOp::create(b, loc,
                                          Value(arith::SubFOp::create(b, loc, s, maxScore)));
            memref::StoreOp::create(b, loc, e, scores, ValueRange{t});
            scf::YieldOp::create(b, loc, Value(arith::AddFOp::create(b, loc, sum[0], e)));
          });
      Value inv = arith::DivFOp::create(b, loc, constF32(b, loc, 1.0f), sumLoop.getResult(0));
      // Pass 3: out = round(sum_t round(p_t) * v_t).
      linalg::FillOp::create(b, loc, constF32(b, loc, 0.0f), acc);
      emitFor(b, loc, zero, numKeys, [&](OpBuilder &b, Location loc, Value t) {
        Value e = memref::LoadOp::create(b, loc, scores, ValueRange{t});
        Value pt = toF32(b, loc, roundTo(b, loc, arith::MulFOp::create(b, loc, e, inv), ct));
        Value j = arith::AddIOp::create(b, loc, lo, t);
        Value fromCache = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, pos0);
        Value slot = ring ? Value(arith::RemUIOp::create(b, loc, j, windowIdx)) : j;
        Value row = arith::SubIOp::create(b, loc, j, pos0);
        emitFor(b, loc, zero, dvIdx, [&](OpBuilder &b, Location loc, Value dd) {
          Value value = emitIfElse(
              b, loc, ct, fromCache,
              [&](OpBuilder &b, Location loc) {
                return Value(memref::LoadOp::create(b, loc, vc, ValueRange{slot, g, dd}));
              },
              [&](OpBuilder &b, Location loc) {
                return Value(memref::LoadOp::create(b, loc, v, ValueRange{row, g, dd}));
              });
          Value a = memref::LoadOp::create(b, loc, acc, ValueRange{dd});
          Value prod = arith::MulFOp::create(b, loc, pt, toF32(b, loc, value));
          memref::StoreOp::create(b, loc, Value(arith::AddFOp::create(b, loc, a, prod)),
                                  acc, ValueRange{dd});
        });
      });
      emitFor(b, loc, zero, dvIdx, [&](OpBuilder &b, Location loc, Value dd) {
        Value a = memref::LoadOp::create(b, loc, acc, ValueRange{dd});
        memref::StoreOp::create(b, loc, roundTo(b, loc, a, ct), out, ValueRange{i, h, dd});
      });
    });
  });
  memref::DeallocOp::create(b, loc, acc);
  memref::DeallocOp::create(b, loc, scores);
  state.buffers.map(op->getResult(0), out);
  return success();
}

void lowering::emitCacheWrite(OpBuilder &b, Location loc, Value values,
                              Value cache, Value pos0Value, int64_t window) {
  auto cacheType = cast<MemRefType>(cache.getType());
  Value zero = constIndex(b, loc, 0);
  Value tokens = dimOf(b, loc, values, 0);
  Value pos0 = arith::IndexCastOp::create(b, loc, b.getIndexType(), pos0Value);
  Value first = zero;
  if (window > 0) {
    Value start = arith::SubIOp::create(b, loc, tokens, constIndex(b, loc, window));
    Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, start, zero);
    first = arith::SelectOp::create(b, loc, positive, start, zero);
  }
  Value heads = constIndex(b, loc, cacheType.getDimSize(1));
  Value width = constIndex(b, loc, cacheType.getDimSize(2));
  emitFor(b, loc, first, tokens, [&](OpBuilder &b, Location loc, Value i) {
    Value slot = arith::AddIOp::create(b, loc, pos0, i);
    if (window > 0)
      slot = arith::RemUIOp::create(b, loc, slot, constIndex(b, loc, window));
    emitFor(b, loc, zero, heads, [&](OpBuilder &b, Location loc, Value h) {
      emitFor(b, loc, zero, width, [&](OpBuilder &b, Location loc, Value dd) {
        Value x = memref::LoadOp::create(b, loc, values, ValueRange{i, h, dd});
        memref::StoreOp::create(b, loc, x, cache, ValueRange{slot, h, dd});
      });
    });
  });
}

/// The write is in place: the result is the argument's buffer. On a ring
/// only the last `window` tokens of a long chunk survive, so the earlier
/// ones are not written at all.
static LogicalResult lowerKVWrite(sg::KVWriteOp op, FunctionLowering &state) {
  Value cache = state.lookup(op.getCache());
  IntegerAttr window = op.getWindowAttr();
  emitCacheWrite(state.b, op.getLoc(), state.lookup(op.getValues()), cache,
                 state.lookup(op.getPos0()), window ? window.getInt() : 0);
  state.buffers.map(op.getResult(), cache);
  return success();
}

LogicalResult lowering::lowerAttentionFamily(Operation *op,
                                             FunctionLowering &state) {
  if (auto attn = dyn_cast<sg::SlidingAttnOp>(op))
    return lowerAttention(op,
                          AttnParams{attn.getQ(), attn.getK(), attn.getV(),
                                     attn.getKCache(), attn.getVCache(),
                                     attn.getPos0(), attn.getWindowAttr().getInt(),
                                     attn.getScale().convertToDouble()},
                          state);
  if (auto attn = dyn_cast<sg::FullAttnOp>(op))
    return lowerAttention(op,
                          AttnParams{attn.getQ(), attn.getK(), attn.getV(),
                                     attn.getKCache(), attn.getVCache(),
                                     attn.getPos0(), 0,
                                     attn.getScale().convertToDouble()},
                          state);
  if (auto write = dyn_cast<sg::KVWriteOp>(op))
    return lowerKVWrite(write, state);
  return op->emitError("not an attention-family op");
}
