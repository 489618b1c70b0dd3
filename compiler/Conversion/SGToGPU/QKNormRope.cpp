//===- QKNormRope.cpp - per-head norm, RoPE and the cache append ----------===//
//
// Part of sgc. `qknorm_rope_append` (CUDA.md §1.2): one warp per (token,
// head): the head's sum of squares by warp shuffles, the normalized head
// (rounded as sg.rms_norm rounds it) in shared memory, the rotation of each
// pair (sg.rope / sg.partial_rope, inverse frequencies from the CPU path's
// table), the store, and for a one-token call the write into ring slot
// `pos mod window` or full slot `pos` in the same pass (that slot is read by
// no query of the call). A longer chunk's write is a separate kv_write
// launch after the cache's last reader (convert-sg-to-gpu places it).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/SGToLinalg/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::toF32;

/// The inverse-frequency table as a constant global of the kernel module,
/// shared by every kernel with the same table.
static Value getTable(KernelBody &k, gpu::GPUModuleOp kernels,
                      ArrayRef<float> inv) {
  OpBuilder &b = k.b;
  int64_t half = inv.size();
  auto type = MemRefType::get({half}, b.getF32Type());
  uint64_t hash = 0xcbf29ce484222325ull;
  for (float f : inv) {
    hash ^= llvm::bit_cast<uint32_t>(f);
    hash *= 0x100000001b3ull;
  }
  std::string name = "sgc_rope_inv_freq_" + std::to_string(half) + "_" +
                     llvm::utohexstr(hash);
  if (!SymbolTable::lookupSymbolIn(kernels, name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kernels.getBody());
    auto values = DenseElementsAttr::get(
        RankedTensorType::get({half}, b.getF32Type()), inv);
    memref::GlobalOp::create(b, k.loc, name, b.getStringAttr("private"), type,
                             values, /*constant=*/true,
                             /*alignment=*/IntegerAttr());
  }
  return memref::GetGlobalOp::create(b, k.loc, type, name);
}

FailureOr<KernelUse> gpu_kernels::emitNormRope(Operation *operation,
                                               EmitContext &ctx,
                                               bool writeCache) {
  auto op = cast<sg::NormRopeOp>(operation);
  KernelModule &km = ctx.kernels;
  MemRefType xType = km.paramType(op.getX(), ctx.maxTokens);
  int64_t heads = xType.getDimSize(1), d = xType.getDimSize(2), half = d / 2;
  Type ct = xType.getElementType();
  bool plusOne = op.getWeightOffset() == 1;
  double eps = op.getEps().convertToDouble();
  SmallVector<float> inv;
  if (FloatAttr theta = op.getThetaAttr()) {
    int64_t rotated = half, basis = d;
    if (FloatAttr fraction = op.getRotaryFractionAttr()) {
      int64_t width = std::llround(fraction.getValueAsDouble() * d);
      rotated = width / 2;
      basis = op.getBasis() == "head_width" ? d : width;
    }
    inv = lowering::inverseFrequencies(half, rotated, basis,
                                       theta.getValueAsDouble(),
                                       op.getFactor().convertToDouble());
  }
  int64_t window = op.getWindowAttr() ? op.getWindowAttr().getInt() : 0;
  bool cache = writeCache && op.getCache();

  SmallVector<Value> ins = {op.getX()};
  if (op.getNormWeight())
    ins.push_back(op.getNormWeight());
  if (cache)
    ins.push_back(op.getCache());
  SmallVector<Type> params;
  for (Value v : ins)
    params.push_back(km.paramType(v, ctx.maxTokens));
  params.push_back(km.paramType(op.getResult(), ctx.maxTokens));

  Builder a(op.getContext());
  SmallVector<NamedAttribute> attrs = {
      a.getNamedAttr("heads", a.getI64IntegerAttr(heads)),
      a.getNamedAttr("head_dim", a.getI64IntegerAttr(d)),
      a.getNamedAttr("eps", a.getF64FloatAttr(eps)),
      a.getNamedAttr("norm_weight", a.getBoolAttr(bool(op.getNormWeight()))),
      a.getNamedAttr("norm_offset", a.getI64IntegerAttr(op.getWeightOffset())),
      a.getNamedAttr("append", a.getBoolAttr(cache)),
      a.getNamedAttr("window", a.getI64IntegerAttr(window))};
  if (!inv.empty())
    attrs.push_back(a.getNamedAttr("inv_freq", a.getF32ArrayAttr(inv)));

  KernelUse use;
  use.kernel = km.getOrCreate(
      "qknorm_rope_append", a.getDictionaryAttr(attrs), params, {kWarp, 1, 1},
      ctx.oneToken(), [&](KernelBody &k) {
        OpBuilder &b = k.b;
        Location loc = k.loc;
        unsigned p = 0;
        Value x = k.params[p++];
        Value weight = op.getNormWeight() ? k.params[p++] : Value();
        Value cacheBuf = cache ? k.params[p++] : Value();
        Value out = k.params[p++];
        Value normed = k.sharedBuffer({d}, b.getF32Type());
        Value table = inv.empty() ? Value() : getTable(k, km.kernels, inv);
        Value t = k.blockId(gpu::Dimension::x);
        Value h = k.blockId(gpu::Dimension::y);
        Value lane = k.threadId(gpu::Dimension::x);
        Value warpStep = k.index(kWarp);
        k.ifThen(k.lessThan(t, k.numTokens), [&] {
          Value pos = arith::AddIOp::create(b, loc, k.position(), t);
          Value slot = pos;
          if (window > 0)
            slot = arith::RemUIOp::create(b, loc, pos, k.index(window));
          auto store = [&](Value y, Value c) {
            memref::StoreOp::create(b, loc, y, out, ValueRange{t, h, c});
            if (cacheBuf)
              memref::StoreOp::create(b, loc, y, cacheBuf,
                                      ValueRange{slot, h, c});
          };
          auto sum = scf::ForOp::create(
              b, loc, lane, k.index(d), warpStep, ValueRange{k.f32(0.0f)},
              [&](OpBuilder &b, Location loc, Value c, ValueRange acc) {
                Value v = toF32(b, loc, memref::LoadOp::create(
                                            b, loc, x, ValueRange{t, h, c}));
                scf::YieldOp::create(
                    b, loc,
                    Value(arith::AddFOp::create(
                        b, loc, acc[0],
                        Value(arith::MulFOp::create(b, loc, v, v)))));
              });
          Value total = k.warpSum(sum.getResult(0));
          Value mean = arith::DivFOp::create(b, loc, total,
                                             k.f32(static_cast<float>(d)));
          Value r = math::RsqrtOp::create(
              b, loc,
              Value(arith::AddFOp::create(b, loc, mean,
                                          k.f32(static_cast<float>(eps)))));
          k.forRange(lane, k.index(d), warpStep, [&](Value c) {
            Value w = weight ? Value(memref::LoadOp::create(b, loc, weight,
                                                            ValueRange{c}))
                             : Value();
            Value v = memref::LoadOp::create(b, loc, x, ValueRange{t, h, c});
            Value rounded = lowering::emitNormalize(b, loc, v, r, w, plusOne, ct);
            memref::StoreOp::create(b, loc, toF32(b, loc, rounded), normed,
                                    ValueRange{c});
            if (!table)
              store(rounded, c);
          });
          if (!table)
            return;
          // The pairs read what other lanes normalized.
          gpu::BarrierOp::create(b, loc);
          Value pf = arith::UIToFPOp::create(
              b, loc, b.getF32Type(),
              Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), pos)));
          Value halfIdx = k.index(half);
          k.forRange(lane, halfIdx, warpStep, [&](Value c) {
            auto [cs, sn] = lowering::emitRopeCosSin(b, loc, pf, table, c, ct);
            Value c2 = arith::AddIOp::create(b, loc, c, halfIdx);
            Value lo = memref::LoadOp::create(b, loc, normed, ValueRange{c});
            Value hi = memref::LoadOp::create(b, loc, normed, ValueRange{c2});
            auto [yLo, yHi] =
                lowering::emitRotatePair(b, loc, lo, hi, cs, sn, ct);
            store(yLo, c);
            store(yHi, c2);
          });
        });
      });
  use.ins = ins;
  use.outs = {op.getResult()};
  if (cache) {
    use.outs.push_back(op.getNewCache());
    use.inPlace[op.getNewCache()] = op.getCache();
  }
  use.grid = {ctx.maxTokens, heads, 1};
  use.block = {kWarp, 1, 1};
  return use;
}
