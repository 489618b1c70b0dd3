//===- KVWrite.cpp - a chunk's keys or values into the cache --------------===//
//
// Part of sgc. One warp per (token, kv head) copies the row into slot
// (pos0 + t) mod window on a ring (only the chunk's last `window` tokens:
// the earlier ones would be overwritten anyway) or pos0 + t on a full cache.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

FailureOr<KernelUse> gpu_kernels::emitKVWrite(Location loc, Value values,
                                              Value cache, Value result,
                                              int64_t window,
                                              EmitContext &ctx) {
  KernelModule &km = ctx.kernels;
  MemRefType vType = km.paramType(values, ctx.maxTokens);
  MemRefType cType = km.paramType(cache, ctx.maxTokens);
  int64_t heads = vType.getDimSize(1), d = vType.getDimSize(2);
  Builder a(loc.getContext());
  auto spec = a.getDictionaryAttr(
      {a.getNamedAttr("heads", a.getI64IntegerAttr(heads)),
       a.getNamedAttr("head_dim", a.getI64IntegerAttr(d)),
       a.getNamedAttr("window", a.getI64IntegerAttr(window))});
  KernelUse use;
  use.kernel = km.getOrCreate(
      "kv_write", spec, {vType, cType}, {kWarp, 1, 1}, ctx.oneToken(),
      [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Value in = k.params[0], out = k.params[1];
        Value t = k.blockId(gpu::Dimension::x);
        Value h = k.blockId(gpu::Dimension::y);
        Value live = k.lessThan(t, k.numTokens);
        if (window > 0) {
          // t >= n - window, written as t + window >= n.
          Value shifted = k.index(IndexExpr(t) + window);
          Value late = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                             shifted, k.numTokens);
          live = arith::AndIOp::create(b, live, late);
        }
        k.ifThen(live, [&] {
          Value slot = k.index(IndexExpr(k.position()) + t);
          slot = k.cacheSlot(slot, window);
          Value lane = k.threadId(gpu::Dimension::x);
          Value dims = k.index(d), step = k.index(kWarp);
          k.forRange(
              lane, dims, step,
              [&](Value c) {
                Value v = memref::LoadOp::create(b, in, ValueRange{t, h, c});
                memref::StoreOp::create(b, v, out, ValueRange{slot, h, c});
              });
        });
      });
  (void)cType;
  use.ins = {values, cache};
  use.outs = {result};
  use.inPlace[result] = cache;
  use.grid = {ctx.maxTokens, heads, 1};
  use.block = {kWarp, 1, 1};
  return use;
}
