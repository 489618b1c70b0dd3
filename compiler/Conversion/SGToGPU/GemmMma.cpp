//===- GemmMma.cpp - prefill projections on tensor cores ------------------===//
//
// Part of sgc. `gemm_mma` (CUDA.md §1.2) serves the projections of a chunk
// of tokens (sg.linear, sg.norm_linear, sg.gated_mlp) when rows and weights
// are bf16: Y[t, n] = sum_k X[t, k] W[n, k] with `mma.sync` m16n8k16 (bf16
// products, f32 sums), the tokens as the A operand (row-major) and the
// weight rows as B (K-major, which is mma's "col" layout: no transpose).
//
// A block of 4 warps owns 64 tokens x tileN rows: warp w the tokens
// 16w..16w+15 against all tileN rows (tileN / 8 accumulator tiles). The K
// loop stages tileK columns of X and W in shared memory; the next step's
// global loads (128-bit, read-only for W) are issued before this step's
// mma.sync so their latency hides behind the tensor cores. Fragments are
// read with 32-bit shared loads in PTX's lane mapping; rows are padded by 8
// elements so the 8 rows a fragment load touches fall in distinct banks.
//
// The fused RMSNorm (prologue) normalizes X as it enters shared memory,
// with each token's scale computed once per block; the epilogues (softcap,
// GELU(gate) x up) run on the accumulators in the reference's rounding
// order, as in gemv_rows. Concatenated weights (q, k, v) split the blocks:
// every weight's rows are whole tiles, so a block reads one weight.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
/// Tokens per block: one m16 tile per warp.
constexpr int64_t kWarps = 4;
constexpr int64_t kTileM = 16 * kWarps;
constexpr int64_t kThreads = kWarps * kWarp;
/// bf16 elements per 16-byte global load.
constexpr int64_t kChunk = 8;
/// Padding of a shared row, in elements (bank conflicts of fragment loads).
constexpr int64_t kPad = 8;

struct Tiles {
  int64_t n, k;
};

/// The tiles of `g`, or failure when its shapes are not whole tiles.
FailureOr<Tiles> chooseTiles(const Projection &g, int64_t width) {
  Tiles t;
  t.k = width % 64 == 0 ? 64 : 32;
  if (width % t.k != 0)
    return failure();
  // Gated blocks carry two accumulator sets: half the rows.
  SmallVector<int64_t> candidates =
      g.gated() ? SmallVector<int64_t>{32} : SmallVector<int64_t>{64, 32};
  for (int64_t n : candidates) {
    bool whole = llvm::all_of(g.weights, [&](Value w) {
      return cast<ShapedType>(w.getType()).getDimSize(0) % n == 0;
    });
    // Every thread loads whole chunks of the W tile.
    if (whole && n * t.k / kChunk % kThreads == 0) {
      t.n = n;
      return t;
    }
  }
  return failure();
}

/// The shared bytes of a block.
int64_t sharedBytes(const Projection &g, Tiles t) {
  int64_t row = (t.k + kPad) * 2;
  return kTileM * row + (g.gated() ? 2 : 1) * t.n * row + kTileM * 4;
}

/// The kernel under construction, with the block's coordinates.
class GemmBuilder {
public:
  GemmBuilder(KernelBody &k, const Projection &g, Tiles t, int64_t width)
      : k(k), b(k.b), loc(k.loc), g(g), t(t), width(width) {}

  void build();

private:
  /// A 16-byte chunk of X (normalized when the op fuses the norm), or zeros
  /// for a token past the call's.
  Value loadX(Value m, Value col, Value kb);
  void storeX(Value m, Value col, Value kb, Value chunk);
  /// Chunk `c` of this thread's share of a tile: its row and column.
  std::pair<Value, Value> chunkPlace(int64_t c);
  SmallVector<Value> loadTile(Value kb, int w, Value rowBase);
  void storeTile(ArrayRef<Value> regs, Value kb);
  /// A bf16 pair of a shared tile as the i32 mma.sync takes.
  Value pair(Value tile, Value row, Value col);
  void computeNormScales();
  /// The kernel for a block inside weight `w` (rows from `rowBase`).
  void buildForWeight(int w, Value rowBase);
  void storeResults(ArrayRef<Value> acc, int w, Value rowBase);

  KernelBody &k;
  ImplicitLocOpBuilder &b;
  Location loc;
  const Projection &g;
  Tiles t;
  int64_t width;
  Value x, normWeight;
  SmallVector<Value> weights, outs;
  Value xs, scales;
  SmallVector<Value> ws;
  Value tid, warp, lane, group, quad, t0;
};

std::pair<Value, Value> GemmBuilder::chunkPlace(int64_t c) {
  IndexExpr linear(k.index(IndexExpr(tid) + c * kThreads));
  int64_t perRow = t.k / kChunk;
  Value row = k.index(linear / perRow);
  Value col = k.index(linear % perRow * kChunk);
  return {row, col};
}

Value GemmBuilder::loadX(Value m, Value col, Value kb) {
  Type ct = b.getBF16Type();
  auto chunkType = VectorType::get({kChunk}, ct);
  Value token = k.index(IndexExpr(t0) + m);
  auto ifOp =
      scf::IfOp::create(b, TypeRange{chunkType}, k.lessThan(token, k.numTokens),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value c = k.index(IndexExpr(kb) + col);
    auto v = vector::LoadOp::create(b, chunkType, x, ValueRange{token, c});
    v.setAlignment(16);
    scf::YieldOp::create(b, Value(v));
    b.setInsertionPointToStart(ifOp.elseBlock());
    Value zero = arith::ConstantOp::create(
        b, chunkType, DenseElementsAttr::get(chunkType, APFloat(0.0f)));
    scf::YieldOp::create(b, zero);
  }
  return ifOp.getResult(0);
}

void GemmBuilder::storeX(Value m, Value col, Value kb, Value chunk) {
  // The norm applies at the store: the scales are in shared memory by then.
  if (g.norm) {
    Value r = memref::LoadOp::create(b, scales, ValueRange{m});
    Value w;
    if (normWeight) {
      Value c = k.index(IndexExpr(kb) + col);
      auto wv = vector::LoadOp::create(
          b,
          VectorType::get(
              {kChunk},
              cast<MemRefType>(normWeight.getType()).getElementType()),
          normWeight, ValueRange{c});
      wv.setAlignment(16);
      w = wv;
    }
    chunk = lowering::emitNormalize(b, chunk, r, w, g.normOffset == 1,
                                    b.getBF16Type());
  }
  auto st = vector::StoreOp::create(b, chunk, xs, ValueRange{m, col});
  st.setAlignment(16);
}

SmallVector<Value> GemmBuilder::loadTile(Value kb, int w, Value rowBase) {
  SmallVector<Value> regs;
  for (int64_t c = 0; c < kTileM * t.k / kChunk / kThreads; ++c) {
    auto [m, col] = chunkPlace(c);
    regs.push_back(loadX(m, col, kb));
  }
  int first = g.gated() ? 0 : w, last = g.gated() ? 1 : w;
  for (int i = first; i <= last; ++i)
    for (int64_t c = 0; c < t.n * t.k / kChunk / kThreads; ++c) {
      // bf16 or f16: an f16 chunk becomes bf16 at the store, after the
      // next step's loads are in flight.
      auto chunkType = VectorType::get(
          {kChunk}, cast<MemRefType>(weights[i].getType()).getElementType());
      auto [n, col] = chunkPlace(c);
      Value row = k.index(IndexExpr(rowBase) + n);
      Value kc = k.index(IndexExpr(kb) + col);
      auto v =
          vector::LoadOp::create(b, chunkType, weights[i], ValueRange{row, kc});
      v.setAlignment(16);
      regs.push_back(v);
    }
  return regs;
}

void GemmBuilder::storeTile(ArrayRef<Value> regs, Value kb) {
  size_t r = 0;
  for (int64_t c = 0; c < kTileM * t.k / kChunk / kThreads; ++c) {
    auto [m, col] = chunkPlace(c);
    storeX(m, col, kb, regs[r++]);
  }
  for (Value tile : ws)
    for (int64_t c = 0; c < t.n * t.k / kChunk / kThreads; ++c) {
      auto [n, col] = chunkPlace(c);
      // The weights as bf16 activations read them (f16 rounded to bf16).
      Value chunk = regs[r++];
      if (getElementTypeOrSelf(chunk.getType()).isF16())
        chunk =
            lowering::roundTo(b, lowering::toF32(b, chunk), b.getBF16Type());
      auto st = vector::StoreOp::create(b, chunk, tile, ValueRange{n, col});
      st.setAlignment(16);
    }
}

Value GemmBuilder::pair(Value tile, Value row, Value col) {
  return k.bf16Pair(tile, ValueRange{row}, col);
}

void GemmBuilder::computeNormScales() {
  // Warp w: the scales of its 16 tokens, lanes over the columns.
  emitProjectionNormScales(k, g, x, width, t0, warp, lane, 16, scales);
}

void GemmBuilder::buildForWeight(int w, Value rowBase) {
  int64_t nTiles = t.n / 8;
  int sets = g.gated() ? 2 : 1;
  SmallVector<Value> init(sets * nTiles * 4, k.f32(0.0f));
  SmallVector<Value> first = loadTile(k.index(0), w, rowBase);
  size_t numRegs = first.size();
  llvm::append_range(init, first);
  Value rowA = k.index(IndexExpr(warp) * 16 + group);
  Value rowA8 = k.index(IndexExpr(rowA) + 8);
  Value col2 = k.index(IndexExpr(quad) * 2);
  Value begin = k.index(0);
  Value end = k.index(width);
  Value step = k.index(t.k);
  auto loop = scf::ForOp::create(
      b, begin, end, step, init,
      [&](OpBuilder &, Location, Value kb, ValueRange iter) {
        size_t numAcc = iter.size() - numRegs;
        SmallVector<Value> acc(iter.take_front(numAcc));
        SmallVector<Value> regs(iter.drop_front(numAcc));
        storeTile(regs, kb);
        gpu::BarrierOp::create(b);
        // The next step's loads, in flight during this step's mma.sync.
        Value next = k.index(IndexExpr(kb) + t.k);
        SmallVector<Type> regTypes;
        for (Value r : regs)
          regTypes.push_back(r.getType());
        auto prefetch =
            scf::IfOp::create(b, regTypes, k.lessThan(next, k.index(width)),
                              /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(prefetch.thenBlock());
          scf::YieldOp::create(b, loadTile(next, w, rowBase));
          b.setInsertionPointToStart(prefetch.elseBlock());
          scf::YieldOp::create(b, regs);
        }
        for (int64_t kk = 0; kk < t.k; kk += 16) {
          Value c0 = k.index(IndexExpr(col2) + kk);
          Value c8 = k.index(IndexExpr(c0) + 8);
          SmallVector<Value> a = {pair(xs, rowA, c0), pair(xs, rowA8, c0),
                                  pair(xs, rowA, c8), pair(xs, rowA8, c8)};
          for (int s = 0; s < sets; ++s)
            for (int64_t j = 0; j < nTiles; ++j) {
              Value n = k.index(IndexExpr(group) + 8 * j);
              SmallVector<Value> bFrag = {pair(ws[s], n, c0),
                                          pair(ws[s], n, c8)};
              size_t at = (s * nTiles + j) * 4;
              SmallVector<Value> d =
                  k.mmaBf16(a, bFrag, ArrayRef<Value>(acc).slice(at, 4));
              std::copy(d.begin(), d.end(), acc.begin() + at);
            }
        }
        // Nobody may read the tiles the next step overwrites.
        gpu::BarrierOp::create(b);
        SmallVector<Value> yielded(acc);
        llvm::append_range(yielded, prefetch.getResults());
        scf::YieldOp::create(b, yielded);
      });
  SmallVector<Value> acc(
      loop.getResults().take_front(loop.getNumResults() - numRegs));
  storeResults(acc, w, rowBase);
}

void GemmBuilder::storeResults(ArrayRef<Value> acc, int w, Value rowBase) {
  // Lane (group, quad) holds rows group and group + 8 of its warp's tokens,
  // columns 2 quad and 2 quad + 1 of each 8-row tile.
  int64_t nTiles = t.n / 8;
  Value out = outs[g.gated() ? 0 : w];
  Type yType = cast<MemRefType>(out.getType()).getElementType();
  Value col2 = k.index(IndexExpr(quad) * 2);
  auto finish = [&](Value v, Value up) {
    return emitProjectionEpilogue(b, g, v, up, yType);
  };
  for (int64_t half = 0; half < 2; ++half) {
    // Accumulator rows group and group + 8 of the warp's 16.
    Value token = k.index(IndexExpr(t0) + IndexExpr(warp) * 16 + group +
                          8 * half);
    k.ifThen(k.lessThan(token, k.numTokens), [&] {
      for (int64_t j = 0; j < nTiles; ++j) {
        SmallVector<Value> pairValues;
        for (int64_t e = 0; e < 2; ++e) {
          size_t at = j * 4 + half * 2 + e;
          Value up = g.gated() ? acc[nTiles * 4 + at] : Value();
          pairValues.push_back(finish(acc[at], up));
        }
        auto pairType = VectorType::get({2}, yType);
        Value v = vector::FromElementsOp::create(b, pairType, pairValues);
        Value n = k.index(IndexExpr(rowBase) + col2 + 8 * j);
        auto st = vector::StoreOp::create(b, v, out, ValueRange{token, n});
        st.setAlignment(yType.getIntOrFloatBitWidth() / 4);
      }
    });
  }
}

void GemmBuilder::build() {
  unsigned p = 0;
  x = k.params[p++];
  normWeight = g.normWeight ? k.params[p++] : Value();
  for (size_t i = 0; i < g.weights.size(); ++i) {
    k.markReadOnly(p);
    weights.push_back(k.params[p++]);
  }
  while (p < k.params.size())
    outs.push_back(k.params[p++]);

  Type bf16 = b.getBF16Type();
  xs = k.sharedBuffer({kTileM, t.k + kPad}, bf16);
  for (int s = 0; s < (g.gated() ? 2 : 1); ++s)
    ws.push_back(k.sharedBuffer({t.n, t.k + kPad}, bf16));
  if (g.norm)
    scales = k.sharedBuffer({kTileM}, b.getF32Type());

  tid = k.threadId(gpu::Dimension::x);
  warp = k.index(IndexExpr(tid) / kWarp);
  lane = k.index(IndexExpr(tid) % kWarp);
  group = k.index(IndexExpr(lane) / 4);
  quad = k.index(IndexExpr(lane) % 4);
  t0 = k.index(IndexExpr(k.blockId(gpu::Dimension::y)) * kTileM);
  Value n0 = k.index(IndexExpr(k.blockId(gpu::Dimension::x)) * t.n);
  emitProjectionBlock(
      k, g, t0, kTileM, n0, [&] { computeNormScales(); },
      [&](int w, Value rowBase) { buildForWeight(w, rowBase); });
}
} // namespace

bool gpu_kernels::gemmMmaApplies(Operation *op, const TargetContext &ctx) {
  if (ctx.oneToken())
    return false;
  FailureOr<Projection> g = matchProjection(op);
  if (failed(g))
    return false;
  auto xType = cast<ShapedType>(g->x.getType());
  if (xType.getRank() != 2 || !xType.getElementType().isBF16())
    return false;
  for (Value w : g->weights) {
    auto wType = cast<ShapedType>(w.getType());
    if (wType.getRank() != 2 ||
        !(wType.getElementType().isBF16() || wType.getElementType().isF16()))
      return false;
  }
  for (Value r : op->getResults())
    if (!cast<ShapedType>(r.getType()).getElementType().isBF16())
      return false;
  if (g->normWeight &&
      !cast<ShapedType>(g->normWeight.getType()).getElementType().isBF16())
    return false;
  int64_t width = xType.getDimSize(1);
  FailureOr<Tiles> tiles = chooseTiles(*g, width);
  return succeeded(tiles) && sharedBytes(*g, *tiles) <= ctx.chip.staticSharedLimit;
}

FailureOr<KernelUse> gpu_kernels::emitGemmMma(Operation *op,
                                              EmitContext &ctx, bool lmHead) {
  FailureOr<Projection> matched = matchProjection(op);
  if (failed(matched) || !gemmMmaApplies(op, ctx))
    return op->emitError("convert-sg-to-gpu: no gemm_mma kernel for this "
                         "projection");
  Projection g = *matched;
  g.wantedRowsOnly = lmHead;
  KernelModule &km = ctx.kernels;
  auto xType = km.paramType(g.x, ctx.maxTokens);
  int64_t width = xType.getDimSize(1);
  Tiles tiles = *chooseTiles(g, width);

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
  specAttrs.push_back(a.getNamedAttr("tile_n", a.getI64IntegerAttr(tiles.n)));
  specAttrs.push_back(a.getNamedAttr("tile_k", a.getI64IntegerAttr(tiles.k)));
  specAttrs.push_back(a.getNamedAttr("warps", a.getI64IntegerAttr(kWarps)));

  KernelUse use;
  use.kernel = km.getOrCreate("gemm_mma", a.getDictionaryAttr(specAttrs),
                              params, {kThreads, 1, 1}, ctx.oneToken(),
                              [&](KernelBody &k) {
                                GemmBuilder(k, g, tiles, width).build();
                              });
  use.ins = ins;
  use.outs.assign(op->getResults().begin(), op->getResults().end());
  use.grid = {g.totalRows() / tiles.n,
              (ctx.maxTokens + kTileM - 1) / kTileM, 1};
  // Blocks cover kTileM tokens each: the grid stays at the chunk's maximum
  // and blocks past the call's tokens return at once.
  use.tokenGridDim = -1;
  use.block = {kThreads, 1, 1};
  return use;
}
