//===- Embed.cpp - the embedding gather and scale -------------------------===//
//
// Part of sgc. One block per token: out[t, :] = round(f32(table[id, :]) *
// scale), the rounding of sg.embed on the CPU (gemma-text.md §10).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

static constexpr int64_t kThreads = 128;

FailureOr<KernelUse> gpu_kernels::emitEmbed(Operation *operation,
                                            EmitContext &ctx) {
  auto op = cast<sg::EmbedOp>(operation);
  KernelModule &km = ctx.kernels;
  MemRefType tableType = km.paramType(op.getTable(), ctx.maxTokens);
  MemRefType idsType = km.paramType(op.getIds(), ctx.maxTokens);
  MemRefType outType = km.paramType(op.getResult(), ctx.maxTokens);
  float scale = static_cast<float>(op.getScale().convertToDouble());
  Builder attrs(op.getContext());
  auto spec = attrs.getDictionaryAttr(
      {attrs.getNamedAttr("scale", attrs.getF32FloatAttr(scale)),
       attrs.getNamedAttr("threads", attrs.getI64IntegerAttr(kThreads))});

  KernelUse use;
  use.kernel = km.getOrCreate(
      "embed", spec, {idsType, tableType, outType}, {kThreads, 1, 1},
      ctx.oneToken(), [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Location loc = k.loc;
        Value ids = k.params[0], table = k.params[1], out = k.params[2];
        Value t = k.blockId(gpu::Dimension::x);
        k.ifThen(k.lessThan(t, k.numTokens), [&] {
          Value id = memref::LoadOp::create(b, ids, ValueRange{t});
          Value row = arith::IndexCastOp::create(b, b.getIndexType(), id);
          // Ids outside the table read row 0 instead of stray memory; the
          // runtime rejects them before calling.
          Value vocab = k.index(tableType.getDimSize(0));
          Value inTable = k.lessThan(row, vocab);
          row = arith::SelectOp::create(b, inTable, row, k.index(0));
          Type ct = outType.getElementType();
          Value tid = k.threadId(gpu::Dimension::x);
          Value width = k.index(outType.getDimSize(1));
          Value step = k.index(kThreads);
          k.forRange(
              tid, width, step, [&](Value h) {
                Value e = memref::LoadOp::create(b, table, ValueRange{row, h});
                Value wide = lowering::widenWeight(b, e, ct);
                Value y = arith::MulFOp::create(b, wide, k.f32(scale));
                memref::StoreOp::create(b, lowering::roundTo(b, y, ct), out,
                                        ValueRange{t, h});
              });
        });
      });
  use.ins = {op.getIds(), op.getTable()};
  use.outs = {op.getResult()};
  use.grid = {ctx.maxTokens, 1, 1};
  use.block = {kThreads, 1, 1};
  return use;
}
