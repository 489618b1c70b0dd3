//===- Attention.cpp - attention of each query over its keys --------------===//
//
// Part of sgc. The first attention kernel: one warp per (query, q head),
// the semantics of the CPU path exactly (Conversion/SGToCPU/Attention.cpp):
// query i of the call sits at p = pos0 + i and sees keys j in [lo, p], lo =
// max(0, p - window + 1) on sliding layers, those before the call from the
// cache as it was (ring slot j mod window, or slot j), the rest from the
// call's own keys. Scores are rounded to the compute dtype twice (q.k, then
// scaled) as the reference rounds them; the softmax is in f32 with the
// probabilities rounded before they weight V. Three passes over the keys
// (max, sum, weighted values), the dot products split over the lanes; each
// lane owns every 32nd output dimension. The split-K decode kernel and the
// tensor-core prefill kernel of CUDA.md §4 replace it shape by shape.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/SGToGPU/RebuiltKeys.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

FailureOr<KernelUse> gpu_kernels::emitAttention(Operation *op,
                                                EmitContext &ctx) {
  auto attn = dyn_cast<sg::AttentionOpInterface>(op);
  if (!attn)
    return op->emitError("convert-sg-to-gpu: not an attention op");
  sg::AttentionParts parts = attn.getAttention();
  Value q = parts.q, kNew = parts.k, vNew = parts.v;
  Value kCache = parts.kCache, vCache = parts.vCache, blocks = parts.blocks;
  int64_t window = parts.window;
  double scaleValue = parts.scale;
  // The kernel below is causal only: no image-block mask yet.
  if (blocks)
    return op->emitError("convert-sg-to-gpu: '")
           << op->getName()
           << "' with image-block ids (blocks) has no CUDA kernel yet";
  KernelModule &km = ctx.kernels;
  MemRefType qType = km.paramType(q, ctx.maxTokens);
  MemRefType kcType = km.paramType(kCache, ctx.maxTokens);
  MemRefType vType = km.paramType(vNew, ctx.maxTokens);
  int64_t hq = qType.getDimSize(1), d = qType.getDimSize(2);
  int64_t hkv = kcType.getDimSize(1), dv = vType.getDimSize(2);
  int64_t slots = kcType.getDimSize(0);
  int64_t group = hq / hkv;
  int64_t perLane = (dv + kWarp - 1) / kWarp;
  Type ct = qType.getElementType();
  KeyRebuildSpec rebuild = keyRebuildOf(op);
  SmallVector<Value> ins = {q, kNew, vNew, kCache, vCache};
  if (rebuild)
    ins.push_back(rebuild.weight);
  SmallVector<Type> params;
  for (Value v : ins)
    params.push_back(km.paramType(v, ctx.maxTokens));
  params.push_back(km.paramType(op->getResult(0), ctx.maxTokens));

  Builder a(op->getContext());
  SmallVector<NamedAttribute> specAttrs(
      {a.getNamedAttr("q_heads", a.getI64IntegerAttr(hq)),
       a.getNamedAttr("kv_heads", a.getI64IntegerAttr(hkv)),
       a.getNamedAttr("head_dim", a.getI64IntegerAttr(d)),
       a.getNamedAttr("v_head_dim", a.getI64IntegerAttr(dv)),
       a.getNamedAttr("slots", a.getI64IntegerAttr(slots)),
       a.getNamedAttr("window", a.getI64IntegerAttr(window)),
       a.getNamedAttr("scale", a.getF64FloatAttr(scaleValue))});
  rebuild.appendSpecAttrs(a, specAttrs);
  auto spec = a.getDictionaryAttr(specAttrs);

  KernelUse use;
  use.kernel = km.getOrCreate(
      "attention", spec, params, {kWarp, 1, 1}, ctx.oneToken(),
      [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Value qb = k.params[0], kb = k.params[1], vb = k.params[2];
        Value kc = k.params[3], vc = k.params[4];
        Value out = k.params[ins.size()];
        std::optional<KeyRebuild> keys;
        if (rebuild)
          keys = keyRebuildIn(k, rebuild, k.params[5], ct);
        Value i = k.blockId(gpu::Dimension::x);
        Value h = k.blockId(gpu::Dimension::y);
        Value lane = k.threadId(gpu::Dimension::x);
        Value g = k.index(IndexExpr(h) / group);
        Value zero = k.index(0), one = k.index(1), warp = k.index(kWarp);
        Value scale = k.f32(static_cast<float>(scaleValue));
        k.ifThen(k.lessThan(i, k.numTokens), [&] {
          Value pos0 = k.position();
          Value p = k.index(IndexExpr(pos0) + i);
          Value lo = k.firstKey(p, window);
          Value end = k.index(IndexExpr(p) + 1);
          // Key j's row: (buffer, row index) from the cache or the chunk.
          auto keyRow = [&](Value j, Value cacheBuf, Value chunkBuf,
                            llvm::function_ref<void(Value, Value)> use) {
            Value fromCache = k.lessThan(j, pos0);
            auto ifOp = scf::IfOp::create(b, fromCache,
                                          /*withElseRegion=*/true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            use(cacheBuf, k.cacheSlot(j, window));
            b.setInsertionPointToStart(ifOp.elseBlock());
            use(chunkBuf, k.index(IndexExpr(j) - pos0));
          };
          // The score of key j, the same in every lane.
          auto score = [&](Value j) -> Value {
            auto partial = memref::AllocaOp::create(
                b, MemRefType::get({1}, b.getF32Type()));
            // A V-only cache: the key rebuilt from V's row, one element.
            keyRow(
                j, keys ? vc : kc, keys ? vb : kb, [&](Value buf, Value row) {
                  Value dims = k.index(d);
                  Value zeroSum = k.f32(0.0f);
                  auto dot = scf::ForOp::create(
                      b, lane, dims, warp, ValueRange{zeroSum},
                      [&](OpBuilder &, Location, Value c, ValueRange acc) {
                        Value qv = toF32(b, memref::LoadOp::create(
                                                b, qb, ValueRange{i, h, c}));
                        auto loadAt = [&](Value col) -> Value {
                          return memref::LoadOp::create(
                              b, buf, ValueRange{row, g, col});
                        };
                        Value kv =
                            toF32(b, keys ? emitRebuiltKeyChunk(k, *keys, j, c,
                                                                1, loadAt)
                                          : loadAt(c));
                        scf::YieldOp::create(
                            b, Value(math::FmaOp::create(b, qv, kv, acc[0])));
                      });
                  memref::StoreOp::create(b, dot.getResult(0), partial,
                                          ValueRange{zero});
                });
            Value qk =
                k.warpSum(memref::LoadOp::create(b, partial, ValueRange{zero}));
            Value s = toF32(b, roundTo(b, qk, ct));
            return toF32(b, roundTo(b, arith::MulFOp::create(b, s, scale), ct));
          };
          float negInf = -std::numeric_limits<float>::infinity();
          auto maxLoop = scf::ForOp::create(
              b, lo, end, one, ValueRange{k.f32(negInf)},
              [&](OpBuilder &, Location, Value j, ValueRange acc) {
                scf::YieldOp::create(
                    b, Value(arith::MaximumFOp::create(b, acc[0], score(j))));
              });
          Value maxScore = maxLoop.getResult(0);
          auto sumLoop = scf::ForOp::create(
              b, lo, end, one, ValueRange{k.f32(0.0f)},
              [&](OpBuilder &, Location, Value j, ValueRange acc) {
                Value e = math::ExpOp::create(
                    b, Value(arith::SubFOp::create(b, score(j), maxScore)));
                scf::YieldOp::create(
                    b, Value(arith::AddFOp::create(b, acc[0], e)));
              });
          Value inv =
              arith::DivFOp::create(b, k.f32(1.0f), sumLoop.getResult(0));
          // Each lane's output dimensions: lane + 32 * s, s < perLane.
          auto acc = memref::AllocaOp::create(
              b, MemRefType::get({perLane}, b.getF32Type()));
          for (int64_t s = 0; s < perLane; ++s) {
            Value zeroSum = k.f32(0.0f);
            memref::StoreOp::create(b, zeroSum, acc, ValueRange{k.index(s)});
          }
          auto dimOf = [&](int64_t s) {
            return k.index(IndexExpr(lane) + s * kWarp);
          };
          k.forRange(lo, end, one, [&](Value j) {
            Value e = math::ExpOp::create(
                b, Value(arith::SubFOp::create(b, score(j), maxScore)));
            Value pt =
                toF32(b, roundTo(b, arith::MulFOp::create(b, e, inv), ct));
            keyRow(j, vc, vb, [&](Value buf, Value row) {
              for (int64_t s = 0; s < perLane; ++s) {
                Value dd = dimOf(s);
                k.ifThen(k.lessThan(dd, k.index(dv)), [&] {
                  Value v = toF32(b, memref::LoadOp::create(
                                         b, buf, ValueRange{row, g, dd}));
                  Value old =
                      memref::LoadOp::create(b, acc, ValueRange{k.index(s)});
                  Value sum = arith::AddFOp::create(
                      b, old, Value(arith::MulFOp::create(b, pt, v)));
                  memref::StoreOp::create(b, sum, acc, ValueRange{k.index(s)});
                });
              }
            });
          });
          for (int64_t s = 0; s < perLane; ++s) {
            Value dd = dimOf(s);
            k.ifThen(k.lessThan(dd, k.index(dv)), [&] {
              Value v = memref::LoadOp::create(b, acc, ValueRange{k.index(s)});
              memref::StoreOp::create(b, roundTo(b, v, ct), out,
                                      ValueRange{i, h, dd});
            });
          }
        });
      });
  use.ins = ins;
  use.outs = {op->getResult(0)};
  use.grid = {ctx.maxTokens, hq, 1};
  use.block = {kWarp, 1, 1};
  return use;
}
