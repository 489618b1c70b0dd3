//===- KVWrite.cpp - a chunk's keys or values into a KV cache -------------===//
//
// Part of sgc. Token i of a chunk lands in slot pos0 + i (full layers) or
// (pos0 + i) mod window (rings). sg.kv_write lowers here, and sg.norm_rope
// writes its cache here when the write cannot stay in its loop nest.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/AttentionRows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

void lowering::emitCacheWrite(ImplicitLocOpBuilder &b, Value values,
                              Value cache, Value pos0Value, int64_t window) {
  auto cacheType = cast<MemRefType>(cache.getType());
  Value zero = constIndex(b, 0);
  Value tokens = dimOf(b, values, 0);
  Value pos0 = arith::IndexCastOp::create(b, b.getIndexType(), pos0Value);
  Value first = zero;
  if (window > 0) {
    Value start = arith::SubIOp::create(b, tokens, constIndex(b, window));
    Value positive =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, start, zero);
    first = arith::SelectOp::create(b, positive, start, zero);
  }
  Value heads = constIndex(b, cacheType.getDimSize(1));
  Value width = constIndex(b, cacheType.getDimSize(2));
  emitFor(b, first, tokens, [&](ImplicitLocOpBuilder &b, Value i) {
    Value slot = arith::AddIOp::create(b, pos0, i);
    if (window > 0)
      slot = arith::RemUIOp::create(b, slot, constIndex(b, window));
    emitFor(b, zero, heads, [&](ImplicitLocOpBuilder &b, Value h) {
      emitFor(b, zero, width, [&](ImplicitLocOpBuilder &b, Value dd) {
        Value x = memref::LoadOp::create(b, values, ValueRange{i, h, dd});
        memref::StoreOp::create(b, x, cache, ValueRange{slot, h, dd});
      });
    });
  });
}

/// The write is in place: the result is the argument's buffer. On a ring
/// only the last `window` tokens of a long chunk survive, so the earlier
/// ones are not written at all.
LogicalResult lowering::lowerKVWrite(sg::KVWriteOp op,
                                     FunctionLowering &state) {
  Value cache = state.lookup(op.getCache());
  IntegerAttr window = op.getWindowAttr();
  ImplicitLocOpBuilder b(op.getLoc(), state.b);
  emitCacheWrite(b, state.lookup(op.getValues()), cache,
                 state.lookup(op.getPos0()), window ? window.getInt() : 0);
  state.buffers.map(op.getResult(), cache);
  return success();
}

ArrayRef<OpLowering> lowering::kvWriteLowerings() {
  static const OpLowering table[] = {loweringOf<sg::KVWriteOp, lowerKVWrite>()};
  return table;
}
