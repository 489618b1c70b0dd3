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
LogicalResult lowering::lowerKVWrite(sg::KVWriteOp op,
                                     FunctionLowering &state) {
  Value cache = state.lookup(op.getCache());
  IntegerAttr window = op.getWindowAttr();
  emitCacheWrite(state.b, op.getLoc(), state.lookup(op.getValues()), cache,
                 state.lookup(op.getPos0()), window ? window.getInt() : 0);
  state.buffers.map(op.getResult(), cache);
  return success();
}

ArrayRef<OpLowering> lowering::kvWriteLowerings() {
  static const OpLowering table[] = {loweringOf<sg::KVWriteOp, lowerKVWrite>()};
  return table;
}
