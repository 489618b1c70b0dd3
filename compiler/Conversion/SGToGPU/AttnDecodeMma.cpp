//===- AttnDecodeMma.cpp - a decode attention block's part on tensor cores ===//
//
// Part of sgc. Gemma 4's full layers have 8 q heads per kv head and a head
// dim of 512: a key's K and V (2 KiB) meet 8 x 512 x 4 FLOPs, more than the
// FFMA units keep up with at full memory bandwidth (CUDA.md §4.1). Here a
// block's keys go through mma.sync m16n8k16 with the group's 8 heads as the
// M rows of one tile (rows 8-15 are zero: half the tile is wasted, still far
// cheaper than FFMA).
//
// Per tile of 16 keys, staged in shared memory with 128-bit loads (K and V
// rows from the cache before the call, the call's own row at p; zeros past
// the block's keys):
//   - S = Q K^T: warp w takes head-dim slice [w D/4, (w+1) D/4) for both
//     8-key halves and leaves its partial sums in shared memory; every warp
//     then adds the four partials of the scores its lanes hold, in the same
//     order, so all warps see the same bits;
//   - the scores are rounded as the reference rounds them (to bf16, scaled,
//     rounded again), the keys past the block's masked, and each head's
//     running max and sum updated across the 4 lanes of its row (shuffles);
//   - P (the exponentials, rounded to bf16: the A operand) times V: warp w
//     owns output columns [w D/4, (w+1) D/4), 16 n-tiles of accumulators,
//     rescaled by the running max's correction first.
// The block's part (o, m, l per head) goes to the partials buffer for the
// last block's combine (AttnDecode.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/AttnDecode.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

namespace {
/// Keys per step: the K dimension of one P V product.
constexpr int64_t kKeyTile = 16;
/// Rows of the heads in the M dimension of a tile.
constexpr int64_t kHeadRows = 8;
/// bf16 elements per 16-byte load.
constexpr int64_t kChunk = 8;
/// Padding of a shared row (elements): the 8 rows a fragment load touches
/// fall in distinct banks.
constexpr int64_t kPad = 8;
constexpr int64_t kThreads = kAttnDecodeWarps * kWarp;

int64_t sharedBytes(int64_t d) {
  return (kHeadRows + 2 * kKeyTile) * (d + kPad) * 2 +
         kAttnDecodeWarps * kHeadRows * kKeyTile * 4;
}
} // namespace

bool gpu_kernels::mmaPartsApply(const AttnShape &s, const CudaChip &chip) {
  // The head rows and each key tile load in whole rounds of 16-byte
  // chunks, one per thread (head_dim 64 would leave the q rows unloaded).
  return s.ct.isBF16() && s.group == kHeadRows && s.d == s.dv &&
         s.d % (16 * kAttnDecodeWarps) == 0 &&
         kHeadRows * s.d % (kChunk * kThreads) == 0 &&
         kKeyTile * s.d % (kChunk * kThreads) == 0 &&
         sharedBytes(s.d) <= chip.staticSharedLimit;
}

void gpu_kernels::emitMmaParts(AttnDecodeKernel &a) {
  KernelBody &k = a.k;
  ImplicitLocOpBuilder &b = k.b;
  const AttnShape &s = a.s;
  int64_t d = s.d, slice = d / kAttnDecodeWarps;
  int64_t nTiles = slice / 8, kSteps = slice / 16;
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  auto chunkType = VectorType::get({kChunk}, bf16);
  Value zero = k.index(0);
  Value qs = k.sharedBuffer({kHeadRows, d + kPad}, bf16);
  Value ks = k.sharedBuffer({kKeyTile, d + kPad}, bf16);
  Value vs = k.sharedBuffer({kKeyTile, d + kPad}, bf16);
  Value partS = k.sharedBuffer({kAttnDecodeWarps, kHeadRows, kKeyTile}, f32);
  Value group = k.index(IndexExpr(a.lane) / 4);
  Value quad = k.index(IndexExpr(a.lane) % 4);
  Value col2 = k.index(IndexExpr(quad) * 2);
  Value zeroI32 = arith::ConstantIntOp::create(b, b.getI32Type(), 0);
  Value sliceStart = k.index(IndexExpr(a.warp) * slice);

  // Chunk c of this thread's share of a [rows, d] tile: its row and column.
  auto chunkPlace = [&](int64_t c) -> std::pair<Value, Value> {
    IndexExpr linear(k.index(IndexExpr(a.tid) + c * kThreads));
    Value row = k.index(linear / (d / kChunk));
    Value col = k.index(linear % (d / kChunk) * kChunk);
    return {row, col};
  };
  auto store = [&](Value v, Value tile, Value row, Value col) {
    auto st = vector::StoreOp::create(b, v, tile, ValueRange{row, col});
    st.setAlignment(16);
  };

  // The group's q rows.
  Value head0 = k.index(IndexExpr(a.g) * s.group);
  for (int64_t c = 0; c < kHeadRows * d / kChunk / kThreads; ++c) {
    auto [row, col] = chunkPlace(c);
    auto v = vector::LoadOp::create(
        b, chunkType, a.q,
        ValueRange{zero, k.index(IndexExpr(head0) + row), col});
    v.setAlignment(16);
    store(v, qs, row, col);
  }

  // Key j's row chunk: the cache before the call, the call's own row at p;
  // zeros past the block's keys. `rebuilt`: round(v · w_k) of V's row, the
  // key before its rotation (the tile's pass below).
  auto keyChunk = [&](Value cache, Value own, Value j, Value col,
                      bool rebuilt) -> Value {
    auto loadRow = [&](Value buf, Value row) -> Value {
      auto loadAt = [&](Value at) -> Value {
        auto v =
            vector::LoadOp::create(b, chunkType, buf, ValueRange{row, a.g, at});
        v.setAlignment(16);
        return v;
      };
      return rebuilt ? emitNormedKeyChunk(k, *a.keys, col, kChunk, loadAt(col))
                     : loadAt(col);
    };
    auto ifLive =
        scf::IfOp::create(b, TypeRange{chunkType}, k.lessThan(j, a.stop),
                          /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLive.thenBlock());
    auto ifCached =
        scf::IfOp::create(b, TypeRange{chunkType}, k.lessThan(j, a.pos0),
                          /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifCached.thenBlock());
      scf::YieldOp::create(b, loadRow(cache, k.cacheSlot(j, s.window)));
      b.setInsertionPointToStart(ifCached.elseBlock());
      scf::YieldOp::create(b, loadRow(own, k.index(IndexExpr(j) - a.pos0)));
    }
    scf::YieldOp::create(b, ifCached.getResult(0));
    b.setInsertionPointToStart(ifLive.elseBlock());
    scf::YieldOp::create(
        b,
        Value(arith::ConstantOp::create(
            b, chunkType, DenseElementsAttr::get(chunkType, APFloat(0.0f)))));
    return ifLive.getResult(0);
  };

  float negInf = -std::numeric_limits<float>::infinity();
  SmallVector<Value> init = {k.f32(negInf), k.f32(0.0f)};
  init.append(nTiles * 4, k.f32(0.0f));
  Value scale = k.f32(static_cast<float>(s.scale));
  Value step = k.index(kKeyTile);
  auto loop = scf::ForOp::create(
      b, a.begin, a.stop, step, init,
      [&](OpBuilder &, Location, Value kt, ValueRange iter) {
        Value m = iter[0], l = iter[1];
        SmallVector<Value> o(iter.drop_front(2));
        // Stage the tile's K and V rows.
        for (int64_t c = 0; c < kKeyTile * d / kChunk / kThreads; ++c) {
          auto [row, col] = chunkPlace(c);
          Value j = k.index(IndexExpr(kt) + row);
          bool rebuilt = a.keys.has_value();
          store(keyChunk(rebuilt ? a.vCache : a.kCache,
                         rebuilt ? a.vNew : a.kNew, j, col, rebuilt),
                ks, row, col);
          store(keyChunk(a.vCache, a.vNew, j, col, false), vs, row, col);
        }
        gpu::BarrierOp::create(b);
        if (a.keys) {
          emitRotateKeyTile(k, *a.keys, ks, kKeyTile, kt, a.tid, kThreads);
          gpu::BarrierOp::create(b);
        }

        // This warp's slice of S for both 8-key halves.
        Value rowG = group;
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> acc(4, k.f32(0.0f));
          Value keyRow = k.index(IndexExpr(group) + 8 * half);
          for (int64_t st = 0; st < kSteps; ++st) {
            Value c0 = k.index(IndexExpr(sliceStart) + 16 * st + col2);
            Value c8 = k.index(IndexExpr(c0) + 8);
            SmallVector<Value> aFrag = {k.bf16Pair(qs, ValueRange{rowG}, c0),
                                        zeroI32,
                                        k.bf16Pair(qs, ValueRange{rowG}, c8),
                                        zeroI32};
            SmallVector<Value> bFrag = {k.bf16Pair(ks, ValueRange{keyRow}, c0),
                                        k.bf16Pair(ks, ValueRange{keyRow}, c8)};
            acc = k.mmaBf16(aFrag, bFrag, acc);
          }
          // Rows 0-7 (acc 0, 1) are the heads; rows 8-15 are zero.
          for (int64_t e = 0; e < 2; ++e)
            memref::StoreOp::create(
                b, acc[e], partS,
                ValueRange{a.warp, group,
                           k.index(IndexExpr(col2) + 8 * half + e)});
        }
        gpu::BarrierOp::create(b);

        // The scores of this lane's head (row `group`) at keys 2q, 2q + 1,
        // 2q + 8, 2q + 9 of the tile, rounded and masked.
        SmallVector<Value> scores;
        Value tileMax = k.f32(negInf);
        for (int64_t e : {0, 1, 8, 9}) {
          Value key = k.index(IndexExpr(col2) + e);
          Value sum = k.f32(0.0f);
          for (int64_t w = 0; w < kAttnDecodeWarps; ++w)
            sum = arith::AddFOp::create(
                b, sum,
                Value(memref::LoadOp::create(
                    b, partS, ValueRange{k.index(w), group, key})));
          Value qk = toF32(b, roundTo(b, sum, s.ct));
          Value sc =
              toF32(b, roundTo(b, arith::MulFOp::create(b, qk, scale), s.ct));
          Value live = k.lessThan(k.index(IndexExpr(kt) + key), a.stop);
          sc = arith::SelectOp::create(b, live, sc, k.f32(negInf));
          scores.push_back(sc);
          tileMax = arith::MaximumFOp::create(b, tileMax, sc);
        }
        // The row's 16 keys are spread over the 4 lanes of its quad.
        for (int32_t offset : {1, 2}) {
          auto other = gpu::ShuffleOp::create(b, tileMax, offset, kWarp,
                                              gpu::ShuffleMode::XOR);
          tileMax =
              arith::MaximumFOp::create(b, tileMax, other.getShuffleResult());
        }
        Value mNew = arith::MaximumFOp::create(b, m, tileMax);
        Value corr =
            math::ExpOp::create(b, Value(arith::SubFOp::create(b, m, mNew)));
        SmallVector<Value> p;
        Value rowSum = k.f32(0.0f);
        for (Value sc : scores) {
          p.push_back(math::ExpOp::create(
              b, Value(arith::SubFOp::create(b, sc, mNew))));
          rowSum = arith::AddFOp::create(b, rowSum, p.back());
        }
        for (int32_t offset : {1, 2}) {
          auto other = gpu::ShuffleOp::create(b, rowSum, offset, kWarp,
                                              gpu::ShuffleMode::XOR);
          rowSum = arith::AddFOp::create(b, rowSum, other.getShuffleResult());
        }
        Value lNew = arith::AddFOp::create(
            b, Value(arith::MulFOp::create(b, l, corr)), rowSum);

        // O = O corr + P V over this warp's columns.
        SmallVector<Value> pFrag = {k.packBf16(p[0], p[1]), zeroI32,
                                    k.packBf16(p[2], p[3]), zeroI32};
        Value k0 = col2;
        Value k1 = k.index(IndexExpr(col2) + 1);
        Value k8 = k.index(IndexExpr(col2) + 8);
        Value k9 = k.index(IndexExpr(col2) + 9);
        SmallVector<Value> next = {mNew, lNew};
        for (int64_t n = 0; n < nTiles; ++n) {
          Value col = k.index(IndexExpr(sliceStart) + group + 8 * n);
          auto v = [&](Value key) -> Value {
            return memref::LoadOp::create(b, vs, ValueRange{key, col});
          };
          // One load a statement: argument order differs between compilers.
          Value v0 = v(k0), v1 = v(k1), v8 = v(k8), v9 = v(k9);
          SmallVector<Value> bFrag = {k.packBf16(v0, v1), k.packBf16(v8, v9)};
          SmallVector<Value> c(o.begin() + 4 * n, o.begin() + 4 * n + 4);
          c[0] = arith::MulFOp::create(b, c[0], corr);
          c[1] = arith::MulFOp::create(b, c[1], corr);
          llvm::append_range(next, k.mmaBf16(pFrag, bFrag, c));
        }
        // The next tile overwrites the staged rows and the partial scores.
        gpu::BarrierOp::create(b);
        scf::YieldOp::create(b, next);
      });

  // The block's part: head `group`'s o at this warp's columns 8n + 2q and
  // + 1; m and l once per head.
  Value h = group;
  for (int64_t n = 0; n < nTiles; ++n) {
    Value col = k.index(IndexExpr(sliceStart) + col2 + 8 * n);
    Value pair = vector::FromElementsOp::create(
        b, VectorType::get({2}, f32),
        ValueRange{loop.getResult(2 + 4 * n), loop.getResult(3 + 4 * n)});
    auto st = vector::StoreOp::create(b, pair, a.partials,
                                      ValueRange{a.g, a.split, h, col});
    st.setAlignment(8);
  }
  Value warp0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, a.warp, zero);
  Value quad0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, quad, zero);
  Value writesStats = arith::AndIOp::create(b, warp0, quad0);
  k.ifThen(writesStats, [&] {
    for (int64_t e = 0; e < 2; ++e)
      memref::StoreOp::create(b, loop.getResult(e), a.partials,
                              ValueRange{a.g, a.split, h, k.index(d + e)});
  });
}
