//===- QKNormRope.cpp - per-head norm, RoPE and the cache append ----------===//
//
// Part of sgc. `qknorm_rope_append` (CUDA.md §1.2), a layer's q, k (and
// Gemma 4's v) in one launch: one warp per (token, head): the head's sum of
// squares by warp shuffles, the normalized head (rounded as sg.rms_norm
// rounds it) in shared memory, the rotation of each pair (sg.rope /
// sg.partial_rope, inverse frequencies from the CPU path's table), the
// store, and for a one-token call the write into ring slot `pos mod window`
// or full slot `pos` in the same pass (that slot is read by no query of the
// call). A longer chunk's writes are kv_write launches after each cache's
// last reader (convert-sg-to-gpu places them).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"


#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::toF32;

/// The inverse-frequency table, a constant global of the kernel module.
static Value getTable(KernelBody &k, gpu::GPUModuleOp kernels,
                      ArrayRef<float> inv) {
  std::string name =
      lowering::getOrCreateInvFreqGlobal(k.b, kernels, k.loc, inv);
  return memref::GetGlobalOp::create(
      k.b,
      MemRefType::get({static_cast<int64_t>(inv.size())}, k.b.getF32Type()),
      name);
}

namespace {
/// One tensor of a qknorm_rope_append launch: an sg.norm_rope (its cache
/// written in the same pass when `append`), or an sg.kv_write (a copy into
/// the cache).
struct HeadJob {
  Operation *op;
  bool append;
  /// Filled by describe().
  Value x, weight, cache, out, newCache;
  int64_t heads = 0, d = 0, window = 0;
  SmallVector<float> inv;
  DictionaryAttr spec;
};

void describe(HeadJob &job, EmitContext &ctx) {
  Builder a(job.op->getContext());
  if (auto write = dyn_cast<sg::KVWriteOp>(job.op)) {
    job.x = write.getValues();
    job.cache = write.getCache();
    job.newCache = write.getResult();
    job.window = write.getWindowAttr() ? write.getWindowAttr().getInt() : 0;
  } else {
    auto op = cast<sg::NormRopeOp>(job.op);
    job.x = op.getX();
    job.weight = op.getNormWeight();
    job.out = op.getResult();
    if (job.append && op.getCache()) {
      job.cache = op.getCache();
      job.newCache = op.getNewCache();
    }
    job.window = op.getWindowAttr() ? op.getWindowAttr().getInt() : 0;
  }
  auto xType = cast<ShapedType>(job.x.getType());
  job.heads = xType.getDimSize(1);
  job.d = xType.getDimSize(2);
  SmallVector<NamedAttribute> attrs = {
      a.getNamedAttr("heads", a.getI64IntegerAttr(job.heads)),
      a.getNamedAttr("head_dim", a.getI64IntegerAttr(job.d)),
      a.getNamedAttr("append", a.getBoolAttr(bool(job.cache))),
      a.getNamedAttr("window", a.getI64IntegerAttr(job.window))};
  auto op = dyn_cast<sg::NormRopeOp>(job.op);
  if (!op) {
    attrs.push_back(a.getNamedAttr("copy", a.getUnitAttr()));
    job.spec = a.getDictionaryAttr(attrs);
    return;
  }
  int64_t half = job.d / 2;
  if (FloatAttr theta = op.getThetaAttr()) {
    int64_t rotated = half, basis = job.d;
    if (FloatAttr fraction = op.getRotaryFractionAttr()) {
      int64_t width = std::llround(fraction.getValueAsDouble() * job.d);
      rotated = width / 2;
      basis = op.getBasis() == "head_width" ? job.d : width;
    }
    job.inv = lowering::inverseFrequencies(half, rotated, basis,
                                           theta.getValueAsDouble(),
                                           op.getFactor().convertToDouble());
  }
  attrs.push_back(a.getNamedAttr("eps", op.getEpsAttr()));
  attrs.push_back(a.getNamedAttr("norm_weight", a.getBoolAttr(bool(job.weight))));
  attrs.push_back(
      a.getNamedAttr("norm_offset", a.getI64IntegerAttr(op.getWeightOffset())));
  if (!job.inv.empty())
    attrs.push_back(a.getNamedAttr("inv_freq", a.getF32ArrayAttr(job.inv)));
  job.spec = a.getDictionaryAttr(attrs);
  (void)ctx;
}

/// The code of one job for head `h` of token `t`; params: x, [weight],
/// [cache], [out] as describe() found them.
void emitJob(KernelBody &k, const HeadJob &job, Value x, Value weight,
             Value cacheBuf, Value out, Value normed, gpu::GPUModuleOp kernels,
             Value t, Value h) {
  ImplicitLocOpBuilder &b = k.b;
  Location loc = k.loc;
  Value lane = k.threadId(gpu::Dimension::x);
  Value warpStep = k.index(kWarp);
  int64_t d = job.d, half = d / 2;
  Value pos = k.index(IndexExpr(k.position()) + t);
  Value slot = k.cacheSlot(pos, job.window);
  auto store = [&](Value y, Value c) {
    if (out)
      memref::StoreOp::create(b, y, out, ValueRange{t, h, c});
    if (cacheBuf)
      memref::StoreOp::create(b, y, cacheBuf, ValueRange{slot, h, c});
  };
  auto rope = dyn_cast<sg::NormRopeOp>(job.op);
  if (!rope) {
    // kv_write: the row as it is.
    k.forRange(lane, k.index(d), warpStep, [&](Value c) {
      store(memref::LoadOp::create(b, x, ValueRange{t, h, c}), c);
    });
    return;
  }
  Type ct = cast<MemRefType>(x.getType()).getElementType();
  Value table = job.inv.empty() ? Value() : getTable(k, kernels, job.inv);
  Value sum = k.sumOfSquares(lane, k.index(d), warpStep, [&](Value c) {
    return memref::LoadOp::create(b, x, ValueRange{t, h, c});
  });
  Value r = k.rmsScale(k.warpSum(sum), d, rope.getEps().convertToDouble());
  bool plusOne = rope.getWeightOffset() == 1;
  k.forRange(lane, k.index(d), warpStep, [&](Value c) {
    Value w = weight ? Value(memref::LoadOp::create(b, weight, ValueRange{c}))
                     : Value();
    Value v = memref::LoadOp::create(b, x, ValueRange{t, h, c});
    Value rounded = lowering::emitNormalize(b, v, r, w, plusOne, ct);
    memref::StoreOp::create(b, toF32(b, rounded), normed, ValueRange{c});
    if (!table)
      store(rounded, c);
  });
  if (!table)
    return;
  // The pairs read what other lanes normalized.
  gpu::BarrierOp::create(b);
  Value pf = arith::UIToFPOp::create(
      b, b.getF32Type(),
      Value(arith::IndexCastOp::create(b, b.getI64Type(), pos)));
  Value halfIdx = k.index(half);
  k.forRange(lane, halfIdx, warpStep, [&](Value c) {
    auto [cs, sn] = lowering::emitRopeCosSin(b, pf, table, c, ct);
    Value c2 = k.index(IndexExpr(c) + half);
    Value lo = memref::LoadOp::create(b, normed, ValueRange{c});
    Value hi = memref::LoadOp::create(b, normed, ValueRange{c2});
    auto [yLo, yHi] = lowering::emitRotatePair(b, lo, hi, cs, sn, ct);
    store(yLo, c);
    store(yHi, c2);
  });
}
} // namespace

FailureOr<KernelUse> gpu_kernels::emitHeadJobs(ArrayRef<Operation *> ops,
                                               EmitContext &ctx,
                                               bool append) {
  KernelModule &km = ctx.kernels;
  SmallVector<HeadJob> jobs;
  for (Operation *op : ops) {
    jobs.push_back(HeadJob{op, append || isa<sg::KVWriteOp>(op)});
    describe(jobs.back(), ctx);
  }
  // Parameters: every job's inputs, then every job's new outputs.
  KernelUse use;
  SmallVector<Type> params;
  struct Slots {
    int x = -1, weight = -1, cache = -1, out = -1;
  };
  SmallVector<Slots> slots(jobs.size());
  auto addIn = [&](Value v) {
    use.ins.push_back(v);
    params.push_back(km.paramType(v, ctx.maxTokens));
    return static_cast<int>(use.ins.size() - 1);
  };
  for (auto [job, slot] : llvm::zip_equal(jobs, slots)) {
    slot.x = addIn(job.x);
    if (job.weight)
      slot.weight = addIn(job.weight);
    if (job.cache)
      slot.cache = addIn(job.cache);
  }
  int64_t maxD = 0, totalHeads = 0;
  for (auto [job, slot] : llvm::zip_equal(jobs, slots)) {
    if (job.out) {
      // Caches updated in place are outputs but no parameters.
      slot.out = params.size();
      use.outs.push_back(job.out);
      params.push_back(km.paramType(job.out, ctx.maxTokens));
    }
    if (job.newCache) {
      use.outs.push_back(job.newCache);
      use.inPlace[job.newCache] = job.cache;
    }
    maxD = std::max(maxD, job.d);
    totalHeads += job.heads;
  }
  Builder a(ctx.kernels.module.getContext());
  SmallVector<Attribute> specs;
  for (const HeadJob &job : jobs)
    specs.push_back(job.spec);
  auto spec = a.getDictionaryAttr({a.getNamedAttr("jobs", a.getArrayAttr(specs))});

  use.kernel = km.getOrCreate(
      "qknorm_rope_append", spec, params, {kWarp, 1, 1}, ctx.oneToken(),
      [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Value normed = k.sharedBuffer({maxD}, b.getF32Type());
        Value t = k.blockId(gpu::Dimension::x);
        Value h = k.blockId(gpu::Dimension::y);
        auto param = [&](int i) { return i < 0 ? Value() : k.params[i]; };
        k.ifThen(k.lessThan(t, k.numTokens), [&] {
          // Block row y belongs to one job (the same in the whole block).
          int64_t first = 0;
          for (auto [job, slot] : llvm::zip_equal(jobs, slots)) {
            Value lo = k.index(first), hi = k.index(first + job.heads);
            Value fromLo =
                arith::CmpIOp::create(b, arith::CmpIPredicate::uge, h, lo);
            Value belowHi = k.lessThan(h, hi);
            Value mine = arith::AndIOp::create(b, fromLo, belowHi);
            k.ifThen(mine, [&] {
              Value local = k.index(IndexExpr(h) - lo);
              emitJob(k, job, param(slot.x), param(slot.weight),
                      param(slot.cache), param(slot.out), normed, km.kernels,
                      t, local);
            });
            first += job.heads;
          }
        });
      });
  for (Operation *op : ops.drop_front())
    use.fused.push_back(op);
  use.grid = {ctx.maxTokens, totalHeads, 1};
  use.block = {kWarp, 1, 1};
  return use;
}
