//===- AttnDecode.cpp - one query over the KV cache, split over its keys --===//
//
// Part of sgc. `attn_decode_splitk` (CUDA.md §4.2): the decode attention of
// the query at position p over keys [lo, p] (lo = p - window + 1 on sliding
// layers, else 0), with a grid of (kv head, split): block (g, s) takes the
// s-th of `splits` even parts of the live keys, so the split stays even at
// every length and the captured graph never changes. All q heads of kv head
// g are packed in the block (GQA: each key is read from memory once).
//
// Gemma 4's full layers (8 q heads per kv head, head_dim 512: 8 FLOP per
// byte of K and V) compute the parts on tensor cores (AttnDecodeMma.cpp).
// Elsewhere FFMA: the group's heads are shared out `heads_per_warp` at a time (as
// many as fit the registers: q and the output accumulators of a head live
// in registers, 8 elements a lane per 256 of the head dim); the remaining
// warps take every other key (key groups). Per key a warp loads the K and V
// rows once (128-bit loads), dots K with each of its heads (a warp-shuffle
// sum), rounds the score as the reference does (to the compute dtype, then
// scaled and rounded again) and folds it into an online softmax (running
// max m, sum l, and o = sum exp(s - m) v).
//
// Each warp writes its (m, l, o) for its heads to the launch's partials
// buffer; the last block of a kv head to finish (a counter in the zeroed
// workspace region, taken with an atomic add after a memory fence) combines
// every part in a fixed order, writes the rounded output and resets the
// counter. The probabilities are not rounded to the compute dtype before
// they weight V as the eager reference rounds them (one flash-decoding
// pass cannot know the final sum); the e2e tests bound the difference.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/AttnDecode.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

namespace {
constexpr int64_t kWarps = kAttnDecodeWarps;
constexpr int64_t kThreads = kWarps * kWarp;
/// Elements a lane loads at a time (16 bytes of bf16).
constexpr int64_t kChunk = 8;
/// Head-dim elements a warp covers per chunk index.
constexpr int64_t kSpan = kChunk * kWarp;
/// f32 registers a warp's heads may hold (q and o).
constexpr int64_t kHeadRegisters = 64;

int64_t chunks(int64_t width) { return (width + kSpan - 1) / kSpan; }

FailureOr<AttnShape> shapeOf(Operation *op, const TargetContext &ctx) {
  auto attn = dyn_cast<sg::AttentionOpInterface>(op);
  if (!attn)
    return failure();
  sg::AttentionParts a = attn.getAttention();
  AttnShape s;
  s.q = a.q, s.kNew = a.k, s.vNew = a.v, s.kCache = a.kCache,
  s.vCache = a.vCache, s.window = a.window, s.scale = a.scale;
  Value blocks = a.blocks;
  if (blocks || !ctx.oneToken())
    return failure();
  auto qType = cast<ShapedType>(s.q.getType());
  auto kcType = cast<ShapedType>(s.kCache.getType());
  auto vType = cast<ShapedType>(s.vNew.getType());
  s.hq = qType.getDimSize(1), s.d = qType.getDimSize(2);
  s.hkv = kcType.getDimSize(1), s.dv = vType.getDimSize(2);
  s.slots = kcType.getDimSize(0);
  s.ct = qType.getElementType();
  if (s.hkv == 0 || s.hq % s.hkv != 0 || s.d % kChunk != 0 ||
      s.dv % kChunk != 0)
    return failure();
  for (Value v : {s.kNew, s.vNew, s.kCache, s.vCache})
    if (cast<ShapedType>(v.getType()).getElementType() != s.ct)
      return failure();
  s.group = s.hq / s.hkv;
  s.rebuild = keyRebuildOf(op);
  if (s.rebuild && (s.d != s.dv || !s.rebuild.takesChunks(kChunk)))
    return failure();
  // About 64 keys a block at the longest context; at least two parts, so
  // the combine runs at every length.
  s.splits = std::clamp<int64_t>((s.slots + 63) / 64, 2, 64);
  if (mmaPartsApply(s, ctx.chip)) {
    // Every head of the group in the M rows of one tensor-core tile.
    s.mma = true;
    s.headsPerWarp = s.group;
    s.keyGroups = 1;
    return s;
  }
  int64_t perHead = (chunks(s.d) + chunks(s.dv)) * kChunk;
  for (int64_t h = s.group; h >= 1; --h) {
    if (s.group % h != 0 || h * perHead > kHeadRegisters ||
        s.group / h > kWarps || kWarps % (s.group / h) != 0)
      continue;
    s.headsPerWarp = h;
    break;
  }
  if (s.headsPerWarp == 0)
    return failure();
  s.keyGroups = kWarps / (s.group / s.headsPerWarp);
  return s;
}

/// The kernel body.
class AttnDecodeBuilder : public AttnDecodeKernel {
public:
  AttnDecodeBuilder(KernelBody &k, const AttnShape &s)
      : AttnDecodeKernel{k, s}, b(k.b), loc(k.loc) {}
  void build();

private:
  /// This block's parts with FFMA: a warp's heads and key group each.
  void emitWarpParts();
  /// Chunk c of row `row` of `buf` ([rows, heads, width]) at head `head` for
  /// this lane, widened to f32 (zeros where the lane is past the width).
  /// With `keyAt`: the key at that position rebuilt from `buf`'s V row.
  Value loadChunk(Value buf, Value row, Value head, int64_t width, int64_t c,
                  Value keyAt = nullptr);
  /// K (or V) chunk c of key j: from the cache before the call, else from
  /// the call's own row.
  Value keyChunk(bool isK, Value j, int64_t c);
  void lastBlockCombines();
  void combine(Value tid);

  ImplicitLocOpBuilder &b;
  Location loc;
};

Value AttnDecodeBuilder::loadChunk(Value buf, Value row, Value head,
                                   int64_t width, int64_t c, Value keyAt) {
  auto type = VectorType::get({kChunk}, s.ct);
  Value col = k.index(IndexExpr(lane) * kChunk + c * kSpan);
  auto loadAt = [&](Value at) -> Value {
    auto v = vector::LoadOp::create(b, type, buf, ValueRange{row, head, at});
    v.setAlignment(16);
    return v;
  };
  auto load = [&]() -> Value {
    if (keyAt)
      return toF32(b,
                   emitRebuiltKeyChunk(k, *keys, keyAt, col, kChunk, loadAt));
    return toF32(b, loadAt(col));
  };
  if ((c + 1) * kSpan <= width)
    return load();
  auto f32Type = VectorType::get({kChunk}, b.getF32Type());
  auto ifOp =
      scf::IfOp::create(b, TypeRange{f32Type}, k.lessThan(col, k.index(width)),
                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, load());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b,
                       Value(arith::ConstantOp::create(
                           b, f32Type, DenseElementsAttr::get(f32Type, 0.0f))));
  return ifOp.getResult(0);
}

Value AttnDecodeBuilder::keyChunk(bool isK, Value j, int64_t c) {
  int64_t width = isK ? s.d : s.dv;
  // A V-only cache: key j rebuilt from V's row j.
  Value keyAt = isK && keys ? j : nullptr;
  bool fromK = isK && !keys;
  auto f32Type = VectorType::get({kChunk}, b.getF32Type());
  auto ifOp = scf::IfOp::create(b, TypeRange{f32Type}, k.lessThan(j, pos0),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value slot = k.cacheSlot(j, s.window);
  scf::YieldOp::create(
      b, loadChunk(fromK ? kCache : vCache, slot, g, width, c, keyAt));
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value row = k.index(IndexExpr(j) - pos0);
  scf::YieldOp::create(b,
                       loadChunk(fromK ? kNew : vNew, row, g, width, c, keyAt));
  return ifOp.getResult(0);
}

void AttnDecodeBuilder::build() {
  q = k.params[0], kNew = k.params[1], vNew = k.params[2];
  kCache = k.params[3], vCache = k.params[4];
  unsigned next = 5;
  if (s.rebuild)
    keys = keyRebuildIn(k, s.rebuild, k.params[next++], s.ct);
  out = k.params[next++];
  partials = k.params[next++], counters = k.params[next++];
  g = k.blockId(gpu::Dimension::x);
  split = k.blockId(gpu::Dimension::y);
  tid = k.threadId(gpu::Dimension::x);
  warp = k.index(IndexExpr(tid) / kWarp);
  lane = k.index(IndexExpr(tid) % kWarp);
  pos0 = k.position();

  // The live keys [lo, p] and this block's even share of them.
  Value end = k.index(IndexExpr(pos0) + 1);
  Value lo = k.firstKey(pos0, s.window);
  Value per = k.index((IndexExpr(end) - lo).ceilDiv(s.splits));
  Value skipped = arith::MulIOp::create(b, split, per);
  begin = k.index(IndexExpr(lo) + skipped);
  Value shareEnd = k.index(IndexExpr(begin) + per);
  stop = arith::MinUIOp::create(b, end, shareEnd);

  if (s.mma)
    emitMmaParts(*this);
  else
    emitWarpParts();

  // The last block of kv head g to get here combines the parts: fence this
  // thread's writes, count the block in, and see whether it was the last.
  lastBlockCombines();
}

void AttnDecodeBuilder::emitWarpParts() {
  Value zero = k.index(0);
  // This warp's heads (the first is head0 of the group) and key group.
  Value headGroup = k.index(IndexExpr(warp) / s.keyGroups);
  Value keyGroup = k.index(IndexExpr(warp) % s.keyGroups);
  Value head0 =
      k.index(IndexExpr(g) * s.group + IndexExpr(headGroup) * s.headsPerWarp);
  int64_t cq = chunks(s.d), cv = chunks(s.dv);
  SmallVector<Value> qv;
  for (int64_t i = 0; i < s.headsPerWarp; ++i) {
    Value h = k.index(IndexExpr(head0) + i);
    for (int64_t c = 0; c < cq; ++c)
      qv.push_back(loadChunk(q, zero, h, s.d, c));
  }

  // Online softmax per head: m, l, then the o chunks.
  auto f32Vec = VectorType::get({kChunk}, b.getF32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, f32Vec, DenseElementsAttr::get(f32Vec, 0.0f));
  float negInf = -std::numeric_limits<float>::infinity();
  SmallVector<Value> init;
  for (int64_t i = 0; i < s.headsPerWarp; ++i) {
    init.push_back(k.f32(negInf));
    init.push_back(k.f32(0.0f));
    for (int64_t c = 0; c < cv; ++c)
      init.push_back(zeroVec);
  }
  int64_t stride = 2 + cv;
  Value first = k.index(IndexExpr(begin) + keyGroup);
  Value scale = k.f32(static_cast<float>(s.scale));
  Value step = k.index(s.keyGroups);
  auto loop = scf::ForOp::create(
      b, first, stop, step, init,
      [&](OpBuilder &, Location, Value j, ValueRange iter) {
        SmallVector<Value> kc, vc;
        for (int64_t c = 0; c < cq; ++c)
          kc.push_back(keyChunk(true, j, c));
        for (int64_t c = 0; c < cv; ++c)
          vc.push_back(keyChunk(false, j, c));
        SmallVector<Value> next;
        for (int64_t i = 0; i < s.headsPerWarp; ++i) {
          Value dot = zeroVec;
          for (int64_t c = 0; c < cq; ++c)
            dot = vector::FMAOp::create(b, qv[i * cq + c], kc[c], dot);
          Value partial =
              vector::ReductionOp::create(b, vector::CombiningKind::ADD, dot);
          Value qk = toF32(b, roundTo(b, k.warpSum(partial), s.ct));
          Value score =
              toF32(b, roundTo(b, arith::MulFOp::create(b, qk, scale), s.ct));
          Value m = iter[i * stride], l = iter[i * stride + 1];
          Value mNew = arith::MaximumFOp::create(b, m, score);
          Value corr =
              math::ExpOp::create(b, Value(arith::SubFOp::create(b, m, mNew)));
          Value p = math::ExpOp::create(
              b, Value(arith::SubFOp::create(b, score, mNew)));
          next.push_back(mNew);
          next.push_back(arith::AddFOp::create(
              b, Value(arith::MulFOp::create(b, l, corr)), p));
          Value corrVec = vector::BroadcastOp::create(b, f32Vec, corr);
          Value pVec = vector::BroadcastOp::create(b, f32Vec, p);
          for (int64_t c = 0; c < cv; ++c) {
            Value o =
                arith::MulFOp::create(b, iter[i * stride + 2 + c], corrVec);
            next.push_back(vector::FMAOp::create(b, pVec, vc[c], o));
          }
        }
        scf::YieldOp::create(b, next);
      });

  // This warp's part: (o, m, l) per head at part split * keyGroups +
  // keyGroup of kv head g (rows of dv + 4 floats: 16-byte aligned).
  Value part = k.index(IndexExpr(split) * s.keyGroups + keyGroup);
  Value lane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, zero);
  for (int64_t i = 0; i < s.headsPerWarp; ++i) {
    Value hl = k.index(IndexExpr(headGroup) * s.headsPerWarp + i);
    SmallVector<Value> at = {g, part, hl};
    k.ifThen(lane0, [&] {
      for (int64_t e = 0; e < 2; ++e) {
        SmallVector<Value> idx(at);
        idx.push_back(k.index(s.dv + e));
        memref::StoreOp::create(b, loop.getResult(i * stride + e), partials,
                                idx);
      }
    });
    for (int64_t c = 0; c < cv; ++c) {
      Value col = k.index(IndexExpr(lane) * kChunk + c * kSpan);
      auto store = [&] {
        SmallVector<Value> idx(at);
        idx.push_back(col);
        auto st = vector::StoreOp::create(b, loop.getResult(i * stride + 2 + c),
                                          partials, idx);
        st.setAlignment(16);
      };
      if ((c + 1) * kSpan <= s.dv)
        store();
      else
        k.ifThen(k.lessThan(col, k.index(s.dv)), store);
    }
  }

}

void AttnDecodeBuilder::lastBlockCombines() {
  k.ifLastBlock(counters, g, s.splits, [&] { combine(tid); });
}

void AttnDecodeBuilder::combine(Value tid) {
  int64_t parts = s.splits * s.keyGroups;
  Value weights = k.sharedBuffer({parts}, b.getF32Type());
  Value zero = k.index(0), one = k.index(1), threads = k.index(kThreads);
  Value numParts = k.index(parts), heads = k.index(s.group);
  float negInf = -std::numeric_limits<float>::infinity();
  k.forRange(zero, heads, one, [&](Value hl) {
    auto load = [&](Value p, int64_t e) -> Value {
      return memref::LoadOp::create(b, partials,
                                    ValueRange{g, p, hl, k.index(s.dv + e)});
    };
    // Every thread scans the parts in the same order: the same M and L.
    Value lowest = k.f32(negInf);
    auto maxLoop = scf::ForOp::create(
        b, zero, numParts, one, ValueRange{lowest},
        [&](OpBuilder &, Location, Value p, ValueRange acc) {
          scf::YieldOp::create(
              b, Value(arith::MaximumFOp::create(b, acc[0], load(p, 0))));
        });
    Value m = maxLoop.getResult(0);
    k.forRange(tid, numParts, threads, [&](Value p) {
      Value w = math::ExpOp::create(
          b, Value(arith::SubFOp::create(b, load(p, 0), m)));
      memref::StoreOp::create(b, w, weights, ValueRange{p});
    });
    gpu::BarrierOp::create(b);
    Value zeroSum = k.f32(0.0f);
    auto sumLoop = scf::ForOp::create(
        b, zero, numParts, one, ValueRange{zeroSum},
        [&](OpBuilder &, Location, Value p, ValueRange acc) {
          Value w = memref::LoadOp::create(b, weights, ValueRange{p});
          scf::YieldOp::create(
              b, Value(math::FmaOp::create(b, load(p, 1), w, acc[0])));
        });
    Value inv = arith::DivFOp::create(b, k.f32(1.0f), sumLoop.getResult(0));
    Value h = k.index(IndexExpr(g) * s.group + hl);
    Value dims = k.index(s.dv);
    k.forRange(tid, dims, threads, [&](Value e) {
      Value zeroAcc = k.f32(0.0f);
      auto acc = scf::ForOp::create(
          b, zero, numParts, one, ValueRange{zeroAcc},
          [&](OpBuilder &, Location, Value p, ValueRange acc) {
            Value w = memref::LoadOp::create(b, weights, ValueRange{p});
            Value o =
                memref::LoadOp::create(b, partials, ValueRange{g, p, hl, e});
            scf::YieldOp::create(b,
                                 Value(math::FmaOp::create(b, o, w, acc[0])));
          });
      Value v = arith::MulFOp::create(b, acc.getResult(0), inv);
      memref::StoreOp::create(b, roundTo(b, v, s.ct), out,
                              ValueRange{zero, h, e});
    });
    // The weights are rewritten for the next head.
    gpu::BarrierOp::create(b);
  });
}
} // namespace

bool gpu_kernels::attnDecodeApplies(Operation *op, const TargetContext &ctx) {
  return succeeded(shapeOf(op, ctx));
}

bool gpu_kernels::attnDecodeUsesMma(Operation *op, const TargetContext &ctx) {
  FailureOr<AttnShape> shape = shapeOf(op, ctx);
  return succeeded(shape) && shape->mma;
}

FailureOr<KernelUse> gpu_kernels::emitAttnDecode(Operation *op,
                                                 EmitContext &ctx) {
  FailureOr<AttnShape> shape = shapeOf(op, ctx);
  if (failed(shape))
    return op->emitError("convert-sg-to-gpu: no attn_decode_splitk kernel for "
                         "this attention");
  const AttnShape &s = *shape;
  KernelModule &km = ctx.kernels;
  SmallVector<Value> ins = {s.q, s.kNew, s.vNew, s.kCache, s.vCache};
  if (s.rebuild)
    ins.push_back(s.rebuild.weight);
  SmallVector<Type> params;
  for (Value v : ins)
    params.push_back(km.paramType(v, ctx.maxTokens));
  params.push_back(km.paramType(op->getResult(0), ctx.maxTokens));
  MLIRContext *mctx = op->getContext();
  auto f32 = Float32Type::get(mctx);
  auto partialsType = MemRefType::get(
      {s.hkv, s.splits * s.keyGroups, s.group, s.dv + 4}, f32);
  auto countersType = MemRefType::get({s.hkv}, IntegerType::get(mctx, 32));
  params.push_back(partialsType);
  params.push_back(countersType);

  Builder a(mctx);
  SmallVector<NamedAttribute> specAttrs(
      {a.getNamedAttr("q_heads", a.getI64IntegerAttr(s.hq)),
       a.getNamedAttr("kv_heads", a.getI64IntegerAttr(s.hkv)),
       a.getNamedAttr("head_dim", a.getI64IntegerAttr(s.d)),
       a.getNamedAttr("v_head_dim", a.getI64IntegerAttr(s.dv)),
       a.getNamedAttr("slots", a.getI64IntegerAttr(s.slots)),
       a.getNamedAttr("window", a.getI64IntegerAttr(s.window)),
       a.getNamedAttr("scale", a.getF64FloatAttr(s.scale)),
       a.getNamedAttr("splits", a.getI64IntegerAttr(s.splits)),
       a.getNamedAttr("heads_per_warp", a.getI64IntegerAttr(s.headsPerWarp)),
       a.getNamedAttr("key_groups", a.getI64IntegerAttr(s.keyGroups)),
       a.getNamedAttr("mma", a.getBoolAttr(s.mma))});
  s.rebuild.appendSpecAttrs(a, specAttrs);
  auto spec = a.getDictionaryAttr(specAttrs);

  KernelUse use;
  // The tensor-core variant is a family of its own in the dumps and the
  // SASS checks.
  use.kernel = km.getOrCreate(s.mma ? "attn_decode_mma" : "attn_decode_splitk",
                              spec, params,
                              {kThreads, 1, 1}, ctx.oneToken(),
                              [&](KernelBody &k) {
                                AttnDecodeBuilder(k, s).build();
                              });
  use.ins = ins;
  use.outs = {op->getResult(0)};
  use.scratch = {partialsType};
  use.zeroed = {countersType};
  use.grid = {s.hkv, s.splits, 1};
  use.block = {kThreads, 1, 1};
  use.tokenGridDim = -1;
  return use;
}
