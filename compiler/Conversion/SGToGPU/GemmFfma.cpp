//===- GemmFfma.cpp - f32 prefill projections on the FMA pipes ------------===//
//
// Part of sgc. `gemm_ffma` serves the projections of a chunk of tokens
// (sg.linear, sg.norm_linear, sg.gated_mlp) with f32 rows and bf16 weights
// (--compute-dtype=f32), where gemm_mma's bf16 tensor cores would round the
// activations: Y[t, n] = sum_k X[t, k] f32(W[n, k]), f32 products and sums
// (FFMA), as gemv_rows computes them, with the same prologue (the fused
// RMSNorm) and epilogues (softcap, GELU(gate) x up in the reference's
// rounding order).
//
// A block of 16 x 16 threads owns 64 tokens x tileN rows (32 or 64): thread
// (ty, tx) the 4 tokens from 4 ty against the tileN / 16 rows from tx
// tileN / 16, so every weight element staged in shared memory serves 64
// tokens instead of one (gemv_rows per token reads the weights once per
// token). The K loop stages 16 columns of X (normalized on the way in) and
// of W (widened to f32) per step, transposed (column-major tiles), so a
// thread reads its 4 tokens and its rows of a column with one vector load
// each (LDS.128: 2 loads for 16 FFMA, or 3 for 32 with gate and up). Each
// output sums its k in order, one FFMA at a time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;
using Epilogue = Projection::Epilogue;

namespace {
/// Threads per side of the block; tokens per thread.
constexpr int64_t kSide = 16;
constexpr int64_t kThreads = kSide * kSide;
constexpr int64_t kTokensPerThread = 4;
constexpr int64_t kTileM = kSide * kTokensPerThread;
/// Columns per K step, elements per thread's load of a tile row (16 bytes of
/// f32 X, 8 of bf16 W), and the padded shared row.
constexpr int64_t kTileK = 16;
constexpr int64_t kLoad = 4;
/// Padding of a transposed tile's row (a column of X or W), in floats: keeps
/// the rows 16-byte aligned and moves the next column 4 banks on.
constexpr int64_t kPad = 4;

/// The rows a block takes: 64 where every weight's rows are whole tiles of
/// 64, else 32; 0 when not even 32 fit.
int64_t chooseTileN(const Projection &g) {
  for (int64_t n : {64, 32})
    if (llvm::all_of(g.weights, [&](Value w) {
          return cast<ShapedType>(w.getType()).getDimSize(0) % n == 0;
        }))
      return n;
  return 0;
}

class FfmaBuilder {
public:
  FfmaBuilder(KernelBody &k, const Projection &g, int64_t tileN, int64_t width)
      : k(k), b(k.b), loc(k.loc), g(g), tileN(tileN), width(width) {}

  void build();

private:
  int64_t rowsPerThread() const { return tileN / kSide; }
  int sets() const { return g.gated() ? 2 : 1; }
  void computeNormScales();
  /// Stages columns [kb, kb + 16) of X and of the weights of set s (weight
  /// `w`, or gate and up) in shared memory.
  void stage(Value kb, int w, Value rowBase);
  void buildForWeight(int w, Value rowBase);
  void storeResults(ArrayRef<Value> acc, int w, Value rowBase);

  KernelBody &k;
  ImplicitLocOpBuilder &b;
  Location loc;
  const Projection &g;
  int64_t tileN, width;
  Value x, normWeight;
  SmallVector<Value> weights, outs;
  Value xs, scales;
  SmallVector<Value> ws;
  Value tid, tx, ty, t0;
};

void FfmaBuilder::computeNormScales() {
  // Warp w the scales of 8 tokens, its lanes over the columns (one warp
  // sum per token, as gemm_mma).
  Value warp = k.index(IndexExpr(tid) / kWarp);
  Value lane = k.index(IndexExpr(tid) % kWarp);
  emitProjectionNormScales(k, g, x, width, t0, warp, lane,
                           kTileM / (kThreads / kWarp), scales);
}

void FfmaBuilder::stage(Value kb, int w, Value rowBase) {
  Type f32 = b.getF32Type();
  // Thread i loads 4 consecutive columns of tile row i / 4.
  Value r = k.index(IndexExpr(tid) / (kTileK / kLoad));
  Value c = k.index(IndexExpr(tid) % (kTileK / kLoad) * kLoad);
  Value col = k.index(IndexExpr(kb) + c);
  // Tiles are column-major: element (row, c + e) at tile[c + e][row].
  auto storeRow = [&](Value tile, Value row, Value v) {
    for (int64_t e = 0; e < kLoad; ++e) {
      Value s = vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e});
      memref::StoreOp::create(b, s, tile,
                              ValueRange{k.index(IndexExpr(c) + e), row});
    }
  };
  // X: 64 tokens x 16 columns, one 16-byte load a thread; zeros past the
  // call's tokens, the norm applied as the row enters.
  auto xVec = VectorType::get({kLoad}, f32);
  Value token = k.index(IndexExpr(t0) + r);
  auto ifOp =
      scf::IfOp::create(b, TypeRange{xVec}, k.lessThan(token, k.numTokens),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto v = vector::LoadOp::create(b, xVec, x, ValueRange{token, col});
    v.setAlignment(16);
    Value row = v;
    if (g.norm) {
      Value scale = memref::LoadOp::create(b, scales, ValueRange{r});
      Value nw;
      if (normWeight) {
        Type wt = cast<MemRefType>(normWeight.getType()).getElementType();
        auto wv = vector::LoadOp::create(b, VectorType::get({kLoad}, wt),
                                         normWeight, ValueRange{col});
        wv.setAlignment(kLoad * wt.getIntOrFloatBitWidth() / 8);
        nw = wv;
      }
      row = lowering::emitNormalize(b, row, scale, nw, g.normOffset == 1, f32);
    }
    scf::YieldOp::create(b, row);
    b.setInsertionPointToStart(ifOp.elseBlock());
    Value zero = arith::ConstantOp::create(
        b, xVec, DenseElementsAttr::get(xVec, APFloat(0.0f)));
    scf::YieldOp::create(b, zero);
  }
  storeRow(xs, r, ifOp.getResult(0));
  // W: tileN rows x 16 columns of each set, 8-byte loads (read-only).
  int first = g.gated() ? 0 : w;
  for (int s = 0; s < sets(); ++s) {
    Value weight = weights[first + s];
    Type wt = cast<MemRefType>(weight.getType()).getElementType();
    // The threads of the first tileN tile rows (all of them at 64).
    auto load = [&] {
      Value row = k.index(IndexExpr(rowBase) + r);
      auto v = vector::LoadOp::create(b, VectorType::get({kLoad}, wt), weight,
                                      ValueRange{row, col});
      v.setAlignment(kLoad * wt.getIntOrFloatBitWidth() / 8);
      storeRow(ws[s], r, toF32(b, v));
    };
    if (tileN == kTileM)
      load();
    else
      k.ifThen(k.lessThan(r, k.index(tileN)), load);
  }
}

void FfmaBuilder::buildForWeight(int w, Value rowBase) {
  int64_t tn = rowsPerThread();
  int64_t perSet = kTokensPerThread * tn;
  SmallVector<Value> init(sets() * perSet, k.f32(0.0f));
  Value begin = k.index(0);
  Value end = k.index(width);
  Value step = k.index(kTileK);
  auto loop = scf::ForOp::create(
      b, begin, end, step, init,
      [&](OpBuilder &, Location, Value kb, ValueRange iter) {
        SmallVector<Value> acc(iter);
        stage(kb, w, rowBase);
        gpu::BarrierOp::create(b);
        Value m0 = k.index(IndexExpr(ty) * kTokensPerThread);
        Value n0 = k.index(IndexExpr(tx) * tn);
        // The thread's elements of a column of a tile, one vector load.
        auto column = [&](Value tile, Value col, Value at, int64_t n) {
          auto v =
              vector::LoadOp::create(b, VectorType::get({n}, b.getF32Type()),
                                     tile, ValueRange{col, at});
          v.setAlignment(4 * n);
          SmallVector<Value> e;
          for (int64_t i = 0; i < n; ++i)
            e.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{i}));
          return e;
        };
        for (int64_t kk = 0; kk < kTileK; ++kk) {
          Value col = k.index(kk);
          SmallVector<Value> xv = column(xs, col, m0, kTokensPerThread), wv;
          for (int s = 0; s < sets(); ++s)
            llvm::append_range(wv, column(ws[s], col, n0, tn));
          for (int s = 0; s < sets(); ++s)
            for (int64_t i = 0; i < kTokensPerThread; ++i)
              for (int64_t j = 0; j < tn; ++j) {
                Value &a = acc[s * perSet + i * tn + j];
                a = math::FmaOp::create(b, xv[i], wv[s * tn + j], a);
              }
        }
        // Nobody may read the tiles the next step overwrites.
        gpu::BarrierOp::create(b);
        scf::YieldOp::create(b, acc);
      });
  storeResults(SmallVector<Value>(loop.getResults()), w, rowBase);
}

void FfmaBuilder::storeResults(ArrayRef<Value> acc, int w, Value rowBase) {
  int64_t tn = rowsPerThread();
  int64_t perSet = kTokensPerThread * tn;
  Value out = outs[g.gated() ? 0 : w];
  Type yType = cast<MemRefType>(out.getType()).getElementType();
  auto finish = [&](Value v, Value up) {
    return emitProjectionEpilogue(b, g, v, up, yType);
  };
  Value m0 = k.index(IndexExpr(ty) * kTokensPerThread);
  Value n = k.index(IndexExpr(rowBase) + IndexExpr(tx) * tn);
  // A token's tn consecutive rows, one vector store.
  for (int64_t i = 0; i < kTokensPerThread; ++i) {
    Value token = k.index(IndexExpr(t0) + m0 + i);
    k.ifThen(k.lessThan(token, k.numTokens), [&] {
      SmallVector<Value> ys;
      for (int64_t j = 0; j < tn; ++j) {
        size_t at = i * tn + j;
        Value up = g.gated() ? acc[perSet + at] : Value();
        ys.push_back(finish(acc[at], up));
      }
      Value v =
          vector::FromElementsOp::create(b, VectorType::get({tn}, yType), ys);
      auto st = vector::StoreOp::create(b, v, out, ValueRange{token, n});
      st.setAlignment(tn * yType.getIntOrFloatBitWidth() / 8);
    });
  }
}

void FfmaBuilder::build() {
  unsigned p = 0;
  x = k.params[p++];
  normWeight = g.normWeight ? k.params[p++] : Value();
  for (size_t i = 0; i < g.weights.size(); ++i) {
    k.markReadOnly(p);
    weights.push_back(k.params[p++]);
  }
  while (p < k.params.size())
    outs.push_back(k.params[p++]);

  Type f32 = b.getF32Type();
  xs = k.sharedBuffer({kTileK, kTileM + kPad}, f32);
  for (int s = 0; s < sets(); ++s)
    ws.push_back(k.sharedBuffer({kTileK, tileN + kPad}, f32));
  if (g.norm)
    scales = k.sharedBuffer({kTileM}, f32);

  tid = k.threadId(gpu::Dimension::x);
  ty = k.index(IndexExpr(tid) / kSide);
  tx = k.index(IndexExpr(tid) % kSide);
  t0 = k.index(IndexExpr(k.blockId(gpu::Dimension::y)) * kTileM);
  Value n0 = k.index(IndexExpr(k.blockId(gpu::Dimension::x)) * tileN);
  emitProjectionBlock(
      k, g, t0, kTileM, n0, [&] { computeNormScales(); },
      [&](int w, Value rowBase) { buildForWeight(w, rowBase); });
}
} // namespace

bool gpu_kernels::gemmFfmaApplies(Operation *op, const TargetContext &ctx) {
  if (ctx.oneToken())
    return false;
  FailureOr<Projection> g = matchProjection(op);
  if (failed(g))
    return false;
  auto xType = cast<ShapedType>(g->x.getType());
  if (xType.getRank() != 2 || !xType.getElementType().isF32() ||
      xType.getDimSize(1) % kTileK != 0)
    return false;
  // bf16 or f16 weights: f32 activations read both exactly.
  for (Value w : g->weights) {
    auto wType = cast<ShapedType>(w.getType());
    if (wType.getRank() != 2 ||
        !(wType.getElementType().isBF16() || wType.getElementType().isF16()))
      return false;
  }
  for (Value r : op->getResults())
    if (!cast<ShapedType>(r.getType()).getElementType().isF32())
      return false;
  return chooseTileN(*g) != 0;
}

FailureOr<KernelUse> gpu_kernels::emitGemmFfma(Operation *op,
                                               EmitContext &ctx, bool lmHead) {
  FailureOr<Projection> matched = matchProjection(op);
  if (failed(matched) || !gemmFfmaApplies(op, ctx))
    return op->emitError("convert-sg-to-gpu: no gemm_ffma kernel for this "
                         "projection");
  Projection g = *matched;
  g.wantedRowsOnly = lmHead;
  KernelModule &km = ctx.kernels;
  auto xType = km.paramType(g.x, ctx.maxTokens);
  int64_t width = xType.getDimSize(1);
  int64_t tileN = chooseTileN(g);

  SmallVector<Type> params = {xType};
  SmallVector<Value> ins = {g.x};
  if (g.normWeight) {
    params.push_back(km.paramType(g.normWeight, ctx.maxTokens));
    ins.push_back(g.normWeight);
  }
  for (Value w : g.weights) {
    params.push_back(km.paramType(w, ctx.maxTokens));
    ins.push_back(w);
  }
  for (Value r : op->getResults())
    params.push_back(km.paramType(r, ctx.maxTokens));

  Builder a(op->getContext());
  SmallVector<NamedAttribute> specAttrs = g.specAttrs(a);
  specAttrs.push_back(a.getNamedAttr("tile_m", a.getI64IntegerAttr(kTileM)));
  specAttrs.push_back(a.getNamedAttr("tile_n", a.getI64IntegerAttr(tileN)));
  specAttrs.push_back(a.getNamedAttr("tile_k", a.getI64IntegerAttr(kTileK)));

  KernelUse use;
  use.kernel = km.getOrCreate("gemm_ffma", a.getDictionaryAttr(specAttrs),
                              params, {kThreads, 1, 1}, ctx.oneToken(),
                              [&](KernelBody &k) {
                                FfmaBuilder(k, g, tileN, width).build();
                              });
  use.ins = ins;
  use.outs.assign(op->getResults().begin(), op->getResults().end());
  use.grid = {g.totalRows() / tileN, (ctx.maxTokens + kTileM - 1) / kTileM,
              1};
  // Blocks cover kTileM tokens each: the grid stays at the chunk's maximum
  // and blocks past the call's tokens return at once.
  use.tokenGridDim = -1;
  use.block = {kThreads, 1, 1};
  return use;
}
