//===- NormRope.cpp - per-head norm, RoPE and cache write in one nest -----===//
//
// Part of sgc. For each token and head: the sum of squares, the normalized
// head (rounded as sg.rms_norm rounds it), the rotation (as sg.rope /
// sg.partial_rope), the store, and the cache write, in one loop nest. The
// cache write stays in the nest when the chunk is one token (it lands in a
// slot no query of the chunk reads: position p on a full cache, the slot of
// p - window on a ring). A chunk of several tokens could overwrite ring slots
// that the attention still reads, so its write runs after the cache's last
// reader, as sg.kv_write would.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

static LogicalResult lowerNormRope(sg::NormRopeOp op, FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  Value weight = op.getNormWeight() ? state.lookup(op.getNormWeight()) : Value();
  Value out = state.bufferFor(loc, op.getResult());
  auto type = cast<MemRefType>(x.getType());
  Type ct = type.getElementType();
  int64_t d = type.getDimSize(2), half = d / 2;
  bool plusOne = op.getWeightOffset() == 1;

  Value table;
  if (FloatAttr theta = op.getThetaAttr()) {
    int64_t rotated = half, basis = d;
    if (FloatAttr fraction = op.getRotaryFractionAttr()) {
      int64_t width = std::llround(fraction.getValueAsDouble() * d);
      rotated = width / 2;
      basis = op.getBasis() == "head_width" ? d : width;
    }
    table = getInvFreqTable(
        state, loc,
        inverseFrequencies(half, rotated, basis, theta.getValueAsDouble(),
                           op.getFactor().convertToDouble()));
  }
  Value cache = op.getCache() ? state.lookup(op.getCache()) : Value();
  IntegerAttr windowAttr = op.getWindowAttr();
  int64_t window = windowAttr ? windowAttr.getInt() : 0;
  bool oneToken = type.getDimSize(0) == 1;

  Value zero = constIndex(b, 0);
  Value dIdx = constIndex(b, d), halfIdx = constIndex(b, half);
  Value pos0 = arith::IndexCastOp::create(b, b.getIndexType(),
                                          state.lookup(op.getPos0()));
  // The normalized head, in f32, for the rotation's pairs.
  Value normed =
      memref::AllocaOp::create(b, MemRefType::get({d}, b.getF32Type()));
  // The token's rounded cos and sin per frequency, computed once for all
  // its heads.
  Value cosSin = table ? Value(memref::AllocaOp::create(
                             b, MemRefType::get({half, 2}, b.getF32Type())))
                       : Value();
  Value one = constIndex(b, 1);

  emitFor(b, zero, dimOf(b, x, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    Value p = arith::AddIOp::create(b, pos0, s);
    Value pf = arith::UIToFPOp::create(
        b, b.getF32Type(),
        Value(arith::IndexCastOp::create(b, b.getI64Type(), p)));
    Value slot = p;
    if (window > 0)
      slot = arith::RemUIOp::create(b, p, constIndex(b, window));
    if (table)
      emitFor(b, zero, halfIdx, [&](ImplicitLocOpBuilder &b, Value k) {
        auto [c, sn] = emitRopeCosSin(b, pf, table, k, ct);
        memref::StoreOp::create(b, c, cosSin, ValueRange{k, zero});
        memref::StoreOp::create(b, sn, cosSin, ValueRange{k, one});
      });
    emitFor(b, zero, dimOf(b, x, 1), [&](ImplicitLocOpBuilder &b, Value h) {
      auto load = [&](ImplicitLocOpBuilder &b, Value k,
                      int64_t lanes = 1) -> Value {
        return emitRowLoad(b, x, ValueRange{s, h}, k, lanes);
      };
      Value r = emitRmsScale(b, d, op.getEps().convertToDouble(), load);
      emitFor(b, zero, dIdx, [&](ImplicitLocOpBuilder &b, Value k) {
        Value w = weight
                      ? Value(memref::LoadOp::create(b, weight, ValueRange{k}))
                      : Value();
        Value rounded = emitNormalize(b, load(b, k), r, w, plusOne, ct);
        memref::StoreOp::create(b, toF32(b, rounded), normed, ValueRange{k});
        if (!table)
          memref::StoreOp::create(b, rounded, out, ValueRange{s, h, k});
      });
      if (table) {
        emitFor(b, zero, halfIdx, [&](ImplicitLocOpBuilder &b, Value k) {
          Value c = memref::LoadOp::create(b, cosSin, ValueRange{k, zero});
          Value sn = memref::LoadOp::create(b, cosSin, ValueRange{k, one});
          Value k2 = arith::AddIOp::create(b, k, halfIdx);
          Value lo = memref::LoadOp::create(b, normed, ValueRange{k});
          Value hi = memref::LoadOp::create(b, normed, ValueRange{k2});
          auto [yLo, yHi] = emitRotatePair(b, lo, hi, c, sn, ct);
          memref::StoreOp::create(b, yLo, out, ValueRange{s, h, k});
          memref::StoreOp::create(b, yHi, out, ValueRange{s, h, k2});
        });
      }
      if (cache && oneToken)
        emitFor(b, zero, dIdx, [&](ImplicitLocOpBuilder &b, Value k) {
          Value y = memref::LoadOp::create(b, out, ValueRange{s, h, k});
          memref::StoreOp::create(b, y, cache, ValueRange{slot, h, k});
        });
    });
  });
  state.buffers.map(op.getResult(), out);
  if (!cache)
    return success();
  state.buffers.map(op.getNewCache(), cache);
  if (oneToken)
    return success();

  // After the last reader of the cache as it was before the chunk.
  Operation *last = op;
  for (Operation *user : op.getCache().getUsers())
    if (user != op && user->getBlock() == op->getBlock() &&
        last->isBeforeInBlock(user))
      last = user;
  Value pos0Value = state.lookup(op.getPos0());
  auto write = [&state, loc, out, cache, pos0Value, window] {
    ImplicitLocOpBuilder b(loc, state.b);
    emitCacheWrite(b, out, cache, pos0Value, window);
  };
  if (last == op)
    write();
  else
    state.deferred.push_back({last, write});
  return success();
}

ArrayRef<OpLowering> lowering::normRopeLowerings() {
  static const OpLowering table[] = {
      loweringOf<sg::NormRopeOp, lowerNormRope>()};
  return table;
}
