//===- LinearKernel.cpp - the CPU projection kernel, rows and tiles ------===//
//
// Part of sgc. Builds `@sgc_<linear spec>(xs, [xb], w..., [bias], y...,
// row_begin, row_end)` for one KernelSpec: the row path (4 accumulators of
// 16 lanes along K, weights prefetched ahead), the f32 register tiles of
// the token path over packed weight panels (LinearPanels.cpp), the bf16
// pair tiles (vdpbf16ps) where the spec has them, and the epilogues;
// Linear.cpp says which path serves which tokens and why (CPU.md §6).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Int16Tiles.h"
#include "compiler/Conversion/SGToCPU/Int8Dot.h"
#include "compiler/Conversion/SGToCPU/LinearSpec.h"
#include "compiler/Conversion/SGToCPU/WeightRead.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;


namespace {
/// Prefetches the cache lines of w[row, col .. col + bytes / unit) from
/// `ahead` columns on (`unit` bytes a buffer column: 2 for bf16, 1 for the
/// bytes of a block encoding): the lines a chain step will read. Past the
/// row's end it touches the next row; prefetches never fault.
void emitPrefetchAhead(ImplicitLocOpBuilder &b, Value w, Value row, Value col,
                       int64_t ahead, int64_t bytes, int64_t unit = 2) {
  for (int64_t line = 0; line < bytes; line += 64) {
    Value at =
        arith::AddIOp::create(b, col, constIndex(b, ahead + line / unit));
    memref::PrefetchOp::create(b, w, ValueRange{row, at},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

/// sum_k f32(w[row, k]) * xs[s, k] for each token s of `tokens`, each as
/// emitChainedSum adds it: 4 x 16-lane FMA chains along K, prefetching the
/// weight stream; the weights (of logical element type `wType`) as
/// activations of type `ct` read them, once a step for all the tokens.
SmallVector<Value> emitRowDots(ImplicitLocOpBuilder &b, Value xs, Value w,
                               Type wType, Value row, ValueRange tokens,
                               int64_t k, Type ct) {
  return emitChainedSums(
      b, k, kLanes, kAccumulators, tokens.size(),
      [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes,
          ValueRange accs) -> SmallVector<Value> {
        Value wv = loadWeightF32(b, w, wType, row, col, lanes, ct);
        SmallVector<Value> out;
        for (auto [s, acc] : llvm::zip_equal(tokens, accs)) {
          Value xv = emitRowLoad(b, xs, ValueRange{s}, col, lanes);
          if (lanes == 1)
            out.push_back(arith::AddFOp::create(
                b, acc, Value(arith::MulFOp::create(b, wv, xv))));
          else
            out.push_back(vector::FMAOp::create(b, wv, xv, acc));
        }
        return out;
      },
      [&](ImplicitLocOpBuilder &b, Value col) {
        // Prefetch the weight stream 1 KiB ahead (the two cache lines this
        // step will need 8 steps from now): measured on Zen 3, the hardware
        // prefetcher alone leaves the kernel at 76 % of read bandwidth, this
        // brings it to 85-94 % (bench/gemv). A block encoding streams its
        // bytes: the same 1 KiB ahead, a step's share of them.
        if (auto quant = dyn_cast<sg::QuantType>(wType)) {
          int64_t stepBytes = quant.getRowBytes(kLanes * kAccumulators *
                                                quant.getBlockElements()) /
                              quant.getBlockElements();
          emitPrefetchAhead(b, w, row, weightBufferColumn(b, wType, col),
                            2 * kPrefetchElements,
                            std::max<int64_t>(stepBytes, 1),
                            /*unit=*/1);
          return;
        }
        emitPrefetchAhead(b, w, row, col, kPrefetchElements,
                          kLanes * kAccumulators * 2);
      });
}

/// sum_k w[row, k] · xb[s, k] over the bf16 pairs of the row: the chains of
/// emitRowDots with one vdpbf16ps per 16 pairs (32 weights: no widening, and
/// half the instructions per weight byte of the f32 chains, so more loads
/// stay in flight). Each pair adds its odd product, then its even one, as
/// the instruction does; the pairs past whole vectors (K % 32, which no
/// model's decode has) add the same way but without the instruction's
/// flushing of denormals. No other path needs these bits. f16 and
/// block-encoded weights (`wType`) become their bf16 pairs in registers
/// (loadWeightPairsBF16). Plain bf16 rows prefetch `prefetchBytes` (an index:
/// the runtime's choice for its host, 0 for none) ahead.
SmallVector<Value> emitRowDotPairs(ImplicitLocOpBuilder &b, Value xb, Value w,
                                   Type wType, Value row, ValueRange tokens,
                                   int64_t k, Value prefetchBytes) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kLanes}, b.getBF16Type());
  Value two = constIndex(b, 2);
  return emitChainedSums(
      b, k / 2, kLanes, kAccumulators, tokens.size(),
      [&](ImplicitLocOpBuilder &b, Value pair, int64_t lanes,
          ValueRange accs) -> SmallVector<Value> {
        Value col = arith::MulIOp::create(b, pair, two);
        SmallVector<Value> out(accs);
        if (lanes == 1) {
          Value next = arith::AddIOp::create(b, col, constIndex(b, 1));
          for (Value c : {next, col}) {
            Value wv = loadWeightF32(b, w, wType, row, c, 1, b.getBF16Type());
            for (auto [s, acc] : llvm::zip_equal(tokens, out)) {
              Value xv = memref::LoadOp::create(b, xb, ValueRange{s, c});
              acc = arith::AddFOp::create(
                  b, acc, Value(arith::MulFOp::create(b, wv, toF32(b, xv))));
            }
          }
          return out;
        }
        Value wv = loadWeightPairsBF16(b, w, wType, row, col);
        for (auto [s, acc] : llvm::zip_equal(tokens, out)) {
          Value xv =
              vector::LoadOp::create(b, vecPairs, xb, ValueRange{s, col});
          acc = x86vector::DotBF16Op::create(b, vecF32, acc, xv, wv);
        }
        return out;
      },
      [&](ImplicitLocOpBuilder &b, Value pair) {
        Value col = arith::MulIOp::create(b, pair, two);
        int64_t stepElements = kLanes * kAccumulators * 2;
        // A block encoding's bytes of a step, as many bytes ahead as a bf16
        // row's (kPairPrefetchElements of 2 bytes: 4 KiB).
        if (auto quant = dyn_cast<sg::QuantType>(wType)) {
          emitPrefetchAhead(b, w, row, weightBufferColumn(b, wType, col),
                            2 * kPairPrefetchElements,
                            quant.getRowBytes(stepElements), /*unit=*/1);
          return;
        }
        // The cache lines a step reads, prefetchBytes ahead where that is
        // not 0 (a branch the loop unswitching takes out of the loop).
        Value zero = constIndex(b, 0);
        Value on = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                         prefetchBytes, zero);
        scf::IfOp::create(
            b, on, implicitLoc([&](ImplicitLocOpBuilder &b) {
              // bf16 weights: two bytes a column.
              Value at =
                  (IndexExpr(col) + IndexExpr(prefetchBytes) / 2).emit(b);
              emitPrefetchAhead(b, w, row, at, 0, stepElements * 2);
              scf::YieldOp::create(b);
            }));
      });
}
using EpilogueFn =
    llvm::function_ref<Value(ImplicitLocOpBuilder &, ValueRange, Value)>;

/// The token rows t0, t0 + 1, ..., t0 + count - 1 of a tile.
SmallVector<Value> tileTokens(ImplicitLocOpBuilder &b, Value t0,
                              int64_t count) {
  SmallVector<Value> rows;
  for (int64_t i = 0; i < count; ++i)
    rows.push_back(arith::AddIOp::create(b, t0, constIndex(b, i)));
  return rows;
}

/// The dot products of tokens t0..t0+kTileTokens-1 with the panel's rows:
/// kTileTokens vector<kTileRows x f32> accumulators over k = 0..K-1, each
/// step one panel load and one broadcast activation per token.
SmallVector<Value> emitTile(ImplicitLocOpBuilder &b, Value xs, Value panel,
                            Value t0, int64_t k) {
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> rowsOf = tileTokens(b, t0, kTileTokens);
  auto step = [&](ImplicitLocOpBuilder &b, Value col,
                  SmallVector<Value> &accs) {
    Value wv = vector::LoadOp::create(b, vecF32, panel,
                                      ValueRange{col, constIndex(b, 0)});
    for (int64_t i = 0; i < kTileTokens; ++i) {
      Value x = memref::LoadOp::create(b, xs, ValueRange{rowsOf[i], col});
      Value xv = vector::BroadcastOp::create(b, vecF32, x);
      accs[i] = vector::FMAOp::create(b, xv, wv, accs[i]);
    }
  };
  SmallVector<Value> inits(kTileTokens, zeroVec);
  return emitUnrolledSteps(b, k, kUnroll, inits, step);
}

/// The bf16 tile: for tokens t0..t0+kDotTileTokens-1, kTileRows dot products
/// each, one vdpbf16ps per token and K pair (its pair of activations
/// broadcast to every row), K pairs in order.
SmallVector<Value> emitDotTile(ImplicitLocOpBuilder &b, Value xb, Value panel,
                               Value base, Value t0, int64_t k) {
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kTileRows}, b.getBF16Type());
  auto pairType = VectorType::get({2}, b.getBF16Type());
  auto wordType = VectorType::get({1}, b.getI32Type());
  auto wordsType = VectorType::get({kTileRows}, b.getI32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> rowsOf = tileTokens(b, t0, kDotTileTokens);
  auto step = [&](ImplicitLocOpBuilder &b, Value p, SmallVector<Value> &accs) {
    Value wv = vector::LoadOp::create(
        b, vecPairs, panel,
        ValueRange{arith::AddIOp::create(b, base, p), constIndex(b, 0)});
    Value col = arith::MulIOp::create(b, p, constIndex(b, 2));
    for (int64_t i = 0; i < kDotTileTokens; ++i) {
      Value pair =
          vector::LoadOp::create(b, pairType, xb, ValueRange{rowsOf[i], col});
      Value word = vector::ExtractOp::create(
          b, vector::BitCastOp::create(b, wordType, pair),
          ArrayRef<int64_t>{0});
      Value xv = vector::BitCastOp::create(
          b, vecPairs, vector::BroadcastOp::create(b, wordsType, word));
      // The broadcast pair is the instruction's last source, the one that
      // may be memory: it folds into the vdpbf16ps as an embedded broadcast
      // ({1to16}) instead of a vbroadcastss of its own. Each lane's two
      // products are the same either way round.
      accs[i] = x86vector::DotBF16Op::create(b, vecF32, accs[i], wv, xv);
    }
  };
  SmallVector<Value> inits(kDotTileTokens, zeroVec);
  return emitUnrolledSteps(b, k / 2, kUnroll, inits, step);
}

/// emitDotTile's sums on FMAs, for hosts whose vdpbf16ps runs at a fraction
/// of their FMA rate (Intel Emerald Rapids: half the FLOP rate). Each K pair
/// of the panel widens in registers, its high halves (odd k) masked and its
/// low halves (even k) shifted up, and each token adds the odd product and
/// then the even one with one FMA each, activations broadcast from xs (the
/// same bf16 values as xb). That is vdpbf16ps's own order of rounded adds,
/// so the sums are emitDotTile's bit for bit, apart from vdpbf16ps flushing
/// subnormal inputs and results to zero.
SmallVector<Value> emitWidenedTile(ImplicitLocOpBuilder &b, Value xs,
                                   Value panel, Value base, Value t0,
                                   int64_t k) {
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kTileRows}, b.getBF16Type());
  auto wordsType = VectorType::get({kTileRows}, b.getI32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  Value highHalves = arith::ConstantOp::create(
      b, wordsType,
      DenseElementsAttr::get(wordsType, static_cast<int32_t>(0xffff0000u)));
  Value halfWidth = arith::ConstantOp::create(
      b, wordsType, DenseElementsAttr::get(wordsType, int32_t{16}));
  SmallVector<Value> rowsOf = tileTokens(b, t0, kDotTileTokens);
  auto step = [&](ImplicitLocOpBuilder &b, Value p, SmallVector<Value> &accs) {
    Value wv = vector::LoadOp::create(
        b, vecPairs, panel,
        ValueRange{arith::AddIOp::create(b, base, p), constIndex(b, 0)});
    Value words = vector::BitCastOp::create(b, wordsType, wv);
    Value odd = arith::AndIOp::create(b, words, highHalves);
    odd = vector::BitCastOp::create(b, vecF32, odd);
    Value even = arith::ShLIOp::create(b, words, halfWidth);
    even = vector::BitCastOp::create(b, vecF32, even);
    Value colEven = arith::MulIOp::create(b, p, constIndex(b, 2));
    Value colOdd = arith::AddIOp::create(b, colEven, constIndex(b, 1));
    for (int64_t i = 0; i < kDotTileTokens; ++i) {
      for (auto [w, col] : {std::pair(odd, colOdd), std::pair(even, colEven)}) {
        Value x = memref::LoadOp::create(b, xs, ValueRange{rowsOf[i], col});
        Value xv = vector::BroadcastOp::create(b, vecF32, x);
        accs[i] = vector::FMAOp::create(b, xv, w, accs[i]);
      }
    }
  };
  SmallVector<Value> inits(kDotTileTokens, zeroVec);
  return emitUnrolledSteps(b, k / 2, kUnroll, inits, step);
}

/// sum_k xs[s, k] · f32(w[row, k]) as one lane of a tile computes it: one
/// fused multiply-add per k, in order.
Value emitLaneDot(ImplicitLocOpBuilder &b, Value xs, Value w, Type wType,
                  Value row, Value s, int64_t k, Type ct) {
  Value zero = constIndex(b, 0);
  Value end = constIndex(b, k);
  Value one = constIndex(b, 1);
  Value init = constF32(b, 0.0f);
  auto loop = scf::ForOp::create(
      b, zero, end, one, ValueRange{init},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value col, ValueRange acc) {
        Value x = memref::LoadOp::create(b, xs, ValueRange{s, col});
        Value wv = loadWeightF32(b, w, wType, row, col, 1, ct);
        scf::YieldOp::create(b, Value(math::FmaOp::create(b, x, wv, acc[0])));
      }));
  return loop.getResult(0);
}

/// What the tile paths of one kernel call work in, allocated once a call.
struct TileBuffers {
  /// The input rows in f32 and (bf16 tiles only) in bf16.
  Value xs, xb;
  /// Per weight: the f32 panel of the f32 tiles (the bf16 tiles pack their
  /// own), and a [kDotTileTokens][kTileRows] spill where either tile leaves
  /// its dot products for the epilogue.
  SmallVector<Value> panels, spills;
  /// i1, true where the bf16 tiles run; null in a kernel without them.
  Value useDot;
  /// i1, the variant's bf16 dot flag: rows outside tiles (decode) take
  /// emitRowDotPairs where it is set; null in a kernel without xb.
  Value rowDot;
  /// How far ahead the pair rows prefetch (index, bytes); set with rowDot.
  Value rowPrefetch;
  /// i1, the runtime's choice for this host: the bf16 tiles on FMAs
  /// (emitWidenedTile) instead of vdpbf16ps; set with rowDot.
  Value widenedTiles;
  /// The int8 activations' records and the variant's int8 flag (i1): rows
  /// outside tiles take emitRowDotsInt8 where it is set; null in a kernel
  /// without int8 rows.
  Value x8;
  Value int8Dot;
};

/// Row `n`'s dot products with each token of `group` outside the tiles, by
/// the best row path of the variant: int8, then bf16 pairs, then f32.
SmallVector<Value> emitRowDotsBest(ImplicitLocOpBuilder &b,
                                   const KernelSpec &spec,
                                   const TileBuffers &bufs, Value w, Value n,
                                   ValueRange group) {
  using Path = std::function<SmallVector<Value>(ImplicitLocOpBuilder &)>;
  auto choose = [&](ImplicitLocOpBuilder &b, Value flag, const Path &then,
                    const Path &otherwise) -> SmallVector<Value> {
    auto path =
        scf::IfOp::create(b, flag, implicitLoc([&](ImplicitLocOpBuilder &b) {
                            scf::YieldOp::create(b, then(b));
                          }),
                          implicitLoc([&](ImplicitLocOpBuilder &b) {
                            scf::YieldOp::create(b, otherwise(b));
                          }));
    return SmallVector<Value>(path.getResults());
  };
  Path f32 = [&](ImplicitLocOpBuilder &b) {
    return emitRowDots(b, bufs.xs, w, spec.wType, n, group, spec.k, spec.yType);
  };
  if (!bufs.rowDot)
    return f32(b);
  Path pairs = [&](ImplicitLocOpBuilder &b) {
    return choose(
        b, bufs.rowDot,
        [&](ImplicitLocOpBuilder &b) {
          return emitRowDotPairs(b, bufs.xb, w, spec.wType, n, group, spec.k,
                                 bufs.rowPrefetch);
        },
        f32);
  };
  if (!bufs.int8Dot)
    return pairs(b);
  return choose(
      b, bufs.int8Dot,
      [&](ImplicitLocOpBuilder &b) {
        return emitRowDotsInt8(b, bufs.x8, w, spec.wType, ValueRange{n}, group,
                               spec.k);
      },
      pairs);
}

/// Stores `v` (scalar or the vector of rows from n on) at out[t, n].
void storeOutput(ImplicitLocOpBuilder &b, Value v, Value out, Value t,
                 Value n) {
  if (isa<VectorType>(v.getType()))
    vector::StoreOp::create(b, v, out, ValueRange{t, n});
  else
    memref::StoreOp::create(b, v, out, ValueRange{t, n});
}

/// Stores a tile's dot products (one vector of kTileRows rows per token) of
/// one weight into its spill.
void spillTile(ImplicitLocOpBuilder &b, ArrayRef<Value> dots, Value spill) {
  for (auto [i, dot] : llvm::enumerate(dots))
    vector::StoreOp::create(b, dot, spill,
                            ValueRange{constIndex(b, i), constIndex(b, 0)});
}

/// The epilogue of a tile of whole kTileRows rows from row n0: for its
/// `count` tokens from t0, the spilled dot products of every weight through
/// `epilogue` into out. One loop over the tokens (not one copy of the
/// epilogue per token), and the dot products wait in memory: left in
/// registers, a gated MLP's gate tile stays live across the up tile's K loop
/// and LLVM spills inside that loop (measured on Zen 3: the gated MLP then
/// took 1.76x the time per FLOP of the plain linears).
void emitSpilledEpilogue(ImplicitLocOpBuilder &b, ArrayRef<Value> spills,
                         Value out, Value t0, Value count, Value n0,
                         EpilogueFn epilogue) {
  Value zero = constIndex(b, 0);
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  emitFor(b, zero, count, [&](ImplicitLocOpBuilder &b, Value i) {
    SmallVector<Value> perWeight;
    for (Value spill : spills)
      perWeight.push_back(
          vector::LoadOp::create(b, vecF32, spill, ValueRange{i, zero}));
    Value y = epilogue(b, perWeight, n0);
    storeOutput(b, y, out, (IndexExpr(t0) + i).emit(b), n0);
  });
}

/// Tokens of a super-block of the bf16 path: the activations of that many
/// tokens (K bf16 each) stay within this much of L2 while every row block
/// of the call passes over them.
static constexpr int64_t kSuperBlockBytes = 512 * 1024;

/// The rows [lo, hi) of the weights through the bf16 tiles: every block of
/// kTileRows rows (the last one padded with zero rows) is packed once a
/// call, then per super-block of tokens (sized for L2, whole tiles) every
/// block runs its tiles of kDotTileTokens tokens over it. Each tile's dot
/// products go through the spill, so the epilogue is one loop over the
/// tile's tokens, not one copy per token. Every output still sums its K
/// pairs in order in one tile, so the blocking changes no bit.
void emitDotRows(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                 const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
                 Value lo, Value hi, Value tokens, EpilogueFn epilogue,
                 bool int16) {
  Value zero = constIndex(b, 0);
  Value numBlocks = (IndexExpr(hi) - lo).ceilDiv(kTileRows).emit(b);
  // The bf16 pairs' panels, or (int16) the i16 tiles' pairs and scales.
  SmallVector<Value> panels;
  SmallVector<Int16Panel> intPanels;
  for (Value w : weights) {
    Value panel;
    Int16Panel intPanel;
    if (int16)
      intPanel = allocInt16Panel(b, numBlocks, spec.k);
    else
      panel = memref::AllocOp::create(
          b,
          MemRefType::get({ShapedType::kDynamic, 2 * kTileRows},
                          b.getBF16Type()),
          ValueRange{(IndexExpr(numBlocks) * (spec.k / 2)).emit(b)},
          b.getI64IntegerAttr(64));
    emitFor(b, zero, numBlocks, [&](ImplicitLocOpBuilder &b, Value nb) {
      Value n0 = (IndexExpr(lo) + IndexExpr(nb) * kTileRows).emit(b);
      if (int16) {
        emitPackInt16Panel(b, w, n0, hi, intPanel, nb, spec.k);
        return;
      }
      Value base = (IndexExpr(nb) * (spec.k / 2)).emit(b);
      emitPackPairPanel(b, w, spec.wType, n0, hi, panel, base, spec.k);
    });
    if (int16)
      intPanels.push_back(intPanel);
    else
      panels.push_back(panel);
  }
  int64_t superTokens =
      std::max<int64_t>(1, kSuperBlockBytes / (spec.k * 2) / kDotTileTokens) *
      kDotTileTokens;
  Value padded = dimOf(b, bufs.xb, 0);
  auto supers = scf::ForOp::create(b, zero, padded, constIndex(b, superTokens));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(supers.getBody());
  Value tb = supers.getInductionVar();
  Value tbEnd =
      arith::MinSIOp::create(b, padded, (IndexExpr(tb) + superTokens).emit(b));
  auto blocks = scf::ForOp::create(b, zero, numBlocks, constIndex(b, 1));
  b.setInsertionPointToStart(blocks.getBody());
  Value nb = blocks.getInductionVar();
  Value n0 = (IndexExpr(lo) + IndexExpr(nb) * kTileRows).emit(b);
  Value base = (IndexExpr(nb) * (spec.k / 2)).emit(b);
  Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                                      (IndexExpr(n0) + kTileRows).emit(b), hi);
  Value blockRows = (IndexExpr(hi) - n0).emit(b);
  auto tiles = scf::ForOp::create(b, tb, tbEnd, constIndex(b, kDotTileTokens));
  b.setInsertionPointToStart(tiles.getBody());
  Value t0 = tiles.getInductionVar();
  for (auto [intPanel, spill] : llvm::zip(intPanels, bufs.spills))
    spillTile(b, emitInt16Tile(b, bufs.x8, intPanel, nb, t0, spec.k), spill);
  for (auto [panel, spill] : llvm::zip(panels, bufs.spills)) {
    auto tile =
        scf::IfOp::create(b, bufs.widenedTiles, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard tileGuard(b);
    b.setInsertionPointToStart(tile.thenBlock());
    spillTile(b, emitWidenedTile(b, bufs.xs, panel, base, t0, spec.k), spill);
    b.setInsertionPointToStart(tile.elseBlock());
    spillTile(b, emitDotTile(b, bufs.xb, panel, base, t0, spec.k), spill);
  }
  Value tileTokens = constIndex(b, kDotTileTokens);
  Value count =
      arith::MinSIOp::create(b, tileTokens, (IndexExpr(tokens) - t0).emit(b));
  auto ifWhole = scf::IfOp::create(b, whole, /*withElseRegion=*/true);
  b.setInsertionPointToStart(ifWhole.thenBlock());
  emitSpilledEpilogue(b, bufs.spills, out, t0, count, n0, epilogue);
  b.setInsertionPointToStart(ifWhole.elseBlock());
  emitFor(b, zero, count, [&](ImplicitLocOpBuilder &b, Value i) {
    emitFor(b, zero, blockRows, [&](ImplicitLocOpBuilder &b, Value j) {
      SmallVector<Value> perWeight;
      for (Value spill : bufs.spills)
        perWeight.push_back(memref::LoadOp::create(b, spill, ValueRange{i, j}));
      Value n = (IndexExpr(n0) + j).emit(b);
      Value y = epilogue(b, perWeight, n);
      storeOutput(b, y, out, (IndexExpr(t0) + i).emit(b), n);
    });
  });
  b.setInsertionPointAfter(supers);
  for (Value panel : panels)
    memref::DeallocOp::create(b, panel);
  for (const Int16Panel &panel : intPanels)
    for (Value buffer : {panel.pairs, panel.scales})
      memref::DeallocOp::create(b, buffer);
}

/// The rows [lo, lo + whole passes) of decode's int8 rows, int8RowsPerPass
/// rows a pass for every token, where the variant has the int8 rows and
/// the call no tiles; returns where the passes end (lo otherwise).
Value emitWideInt8Rows(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                       const TileBuffers &bufs, ArrayRef<Value> weights,
                       Value out, Value lo, Value hi, Value tokens,
                       Value useTiles, EpilogueFn epilogue) {
  int64_t perPass = int8RowsPerPass(spec.wType, spec.k);
  Value pass = constIndex(b, perPass);
  Value on = arith::AndIOp::create(
      b, bufs.int8Dot,
      arith::XOrIOp::create(b, useTiles,
                            arith::ConstantIntOp::create(b, b.getI1Type(), 1)));
  // end = lo + whole passes of [lo, hi) where the int8 rows are on.
  Value wholeEnd =
      (IndexExpr(lo) + (IndexExpr(hi) - lo) / perPass * perPass).emit(b);
  Value end = arith::SelectOp::create(b, on, wholeEnd, lo);
  auto passes = scf::ForOp::create(b, lo, end, pass);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(passes.getBody());
  SmallVector<Value> rows;
  for (int64_t r = 0; r < perPass; ++r)
    rows.push_back(
        arith::AddIOp::create(b, passes.getInductionVar(), constIndex(b, r)));
  emitFor(b, constIndex(b, 0), tokens, [&](ImplicitLocOpBuilder &b, Value s) {
    SmallVector<SmallVector<Value>> perWeight; // [weight][row]
    for (Value w : weights)
      perWeight.push_back(
          emitRowDotsInt8(b, bufs.x8, w, spec.wType, rows, s, spec.k));
    for (auto [r, n] : llvm::enumerate(rows)) {
      SmallVector<Value> dots;
      for (auto &sums : perWeight)
        dots.push_back(sums[r]);
      storeOutput(b, epilogue(b, dots, n), out, s, n);
    }
  });
  return end;
}

/// The f32 tiles and the row path (see the file comment).
void emitRowsF32(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                 const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
                 Value lo, Value hi, Value tokens, EpilogueFn epilogue) {
  Value xs = bufs.xs;
  ArrayRef<Value> panels = bufs.panels;
  Value zero = constIndex(b, 0);
  Value tileRows = constIndex(b, kTileRows);
  Value useTiles = tilesInUse(b, spec, tokens);
  // blockEnd = lo + whole blocks of [lo, hi), or lo without tiles.
  Value wholeEnd =
      (IndexExpr(lo) + (IndexExpr(hi) - lo) / kTileRows * kTileRows).emit(b);
  Value blockEnd = arith::SelectOp::create(b, useTiles, wholeEnd, lo);

  auto blocks = scf::ForOp::create(b, lo, blockEnd, tileRows);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(blocks.getBody());
    Value n0 = blocks.getInductionVar();
    for (auto [w, panel] : llvm::zip_equal(weights, panels))
      emitPackPanel(b, w, spec.wType, n0, panel, spec.k, spec.yType);
    Value paddedTokens = dimOf(b, xs, 0);
    auto tiles =
        scf::ForOp::create(b, zero, paddedTokens, constIndex(b, kTileTokens));
    OpBuilder::InsertionGuard tileGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value t0 = tiles.getInductionVar();
    // One weight's tile at a time: the gate's dot products wait in the
    // spill while the up tile accumulates.
    for (auto [panel, spill] : llvm::zip_equal(panels, bufs.spills))
      spillTile(b, emitTile(b, xs, panel, t0, spec.k), spill);
    Value tileTokens = constIndex(b, kTileTokens);
    Value count =
        arith::MinSIOp::create(b, tileTokens, (IndexExpr(tokens) - t0).emit(b));
    emitSpilledEpilogue(b, bufs.spills, out, t0, count, n0, epilogue);
  }
  // Decode's int8 rows with records past L1: kInt8WideRows rows a pass
  // (int8RowsPerPass), each summed as alone, the rest one by one below.
  Value rowsStart = blockEnd;
  if (bufs.int8Dot && !spec.rowsOnly && int8RowsPerPass(spec.wType, spec.k) > 1)
    rowsStart = emitWideInt8Rows(b, spec, bufs, weights, out, blockEnd, hi,
                                 tokens, useTiles, epilogue);
  // The other rows. With tiles in use they sum exactly as a tile lane does,
  // so which rows fill whole blocks (that depends on how the rows were split
  // over the threads) changes no bit.
  emitFor(b, rowsStart, hi, [&](ImplicitLocOpBuilder &b, Value n) {
    // A batched decode step's rows: kRowGroup tokens per pass over the
    // weight row, each summed as alone (emitRowDots).
    Value grouped = zero;
    if (spec.rowsOnly) {
      grouped = (IndexExpr(tokens) / kRowGroup * kRowGroup).emit(b);
      auto groups =
          scf::ForOp::create(b, zero, grouped, constIndex(b, kRowGroup));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(groups.getBody());
      SmallVector<Value> group;
      for (int64_t g = 0; g < kRowGroup; ++g)
        group.push_back(arith::AddIOp::create(b, groups.getInductionVar(),
                                              constIndex(b, g)));
      SmallVector<SmallVector<Value>> perWeight; // [weight][token]
      for (Value w : weights)
        perWeight.push_back(emitRowDotsBest(b, spec, bufs, w, n, group));
      for (int64_t g = 0; g < kRowGroup; ++g) {
        SmallVector<Value> token;
        for (auto &dots : perWeight)
          token.push_back(dots[g]);
        storeOutput(b, epilogue(b, token, n), out, group[g], n);
      }
    }
    emitFor(b, grouped, tokens, [&](ImplicitLocOpBuilder &b, Value s) {
      SmallVector<Value> perWeight;
      for (Value w : weights) {
        auto dot = scf::IfOp::create(
            b, useTiles, implicitLoc([&](ImplicitLocOpBuilder &b) {
              scf::YieldOp::create(b, emitLaneDot(b, xs, w, spec.wType, n, s,
                                                  spec.k, spec.yType));
            }),
            implicitLoc([&](ImplicitLocOpBuilder &b) {
              scf::YieldOp::create(b, emitRowDotsBest(b, spec, bufs, w, n, s));
            }));
        perWeight.push_back(dot.getResult(0));
      }
      storeOutput(b, epilogue(b, perWeight, n), out, s, n);
    });
  });
}

/// The rows [lo, hi) of the weights (local row numbers) for every token,
/// written to `out`, through whichever path the call takes.
/// `epilogue(b, dots, n)` turns f32 dot products (scalar, or a vector
/// of the rows from n on) of local row `n` into the stored values.
void emitRows(ImplicitLocOpBuilder &b, const KernelSpec &spec,
              const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
              Value lo, Value hi, Value tokens, EpilogueFn epilogue) {
  if (!bufs.useDot) {
    emitRowsF32(b, spec, bufs, weights, out, lo, hi, tokens, epilogue);
    return;
  }
  auto path = scf::IfOp::create(b, bufs.useDot, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(path.thenBlock());
  if (spec.int8Dot && usesInt16Tiles(spec.wType, spec.k)) {
    auto tiles = scf::IfOp::create(b, bufs.int8Dot, /*withElseRegion=*/true);
    b.setInsertionPointToStart(tiles.thenBlock());
    emitDotRows(b, spec, bufs, weights, out, lo, hi, tokens, epilogue,
                /*int16=*/true);
    b.setInsertionPointToStart(tiles.elseBlock());
  }
  emitDotRows(b, spec, bufs, weights, out, lo, hi, tokens, epilogue,
              /*int16=*/false);
  b.setInsertionPointToStart(path.elseBlock());
  emitRowsF32(b, spec, bufs, weights, out, lo, hi, tokens, epilogue);
}
} // namespace

Value linear::tilesInUse(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                         Value tokens) {
  if (spec.rowsOnly)
    return arith::ConstantIntOp::create(b, b.getI1Type(), 0);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::sge, tokens,
                               constIndex(b, kTileTokens));
}

/// Emits the kernel function for `spec`.
func::FuncOp linear::buildKernel(OpBuilder &outer, ModuleOp module,
                                 const KernelSpec &spec, StringRef name) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {f32RowsType(b.getContext(), spec.k)};
  if (spec.bf16Dot)
    args.push_back(bf16RowsType(b.getContext(), spec.k));
  if (spec.int8Dot)
    args.push_back(int8ActivationType(b.getContext(), spec.k));
  for (int64_t rows : spec.rows)
    args.push_back(weightBufferType(rows, spec.k, spec.wType));
  if (spec.biasType)
    args.push_back(MemRefType::get({spec.rows.front()}, spec.biasType));
  for (unsigned i = 0; i < spec.numOutputs(); ++i)
    args.push_back(MemRefType::get({dyn, spec.rows[i]}, spec.yType));
  args.append({b.getIndexType(), b.getIndexType()});

  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func =
      createKernelFunction(b, module, name, args, spec.name());
  Block *entry = &func.getBody().front();
  unsigned next = 0;
  TileBuffers bufs;
  bufs.xs = entry->getArgument(next++);
  if (spec.bf16Dot)
    bufs.xb = entry->getArgument(next++);
  if (spec.int8Dot)
    bufs.x8 = entry->getArgument(next++);
  SmallVector<Value> weights, outputs;
  for (size_t i = 0; i < spec.rows.size(); ++i)
    weights.push_back(entry->getArgument(next++));
  Value bias = spec.biasType ? entry->getArgument(next++) : Value();
  for (unsigned i = 0; i < spec.numOutputs(); ++i)
    outputs.push_back(entry->getArgument(next++));
  Value rowBegin = entry->getArgument(next++);
  Value rowEnd = entry->getArgument(next++);

  Value tokens = dimOf(b, outputs.front(), 0);
  // One panel per weight a block reads (the gated MLP's gate and up), of
  // the path that runs; empty when the chunk is too short for tiles (decode
  // allocates nothing worth a system call).
  Value useTiles = tilesInUse(b, spec, tokens);
  Value f32Tiles = useTiles;
  if (spec.bf16Dot) {
    bufs.rowDot = loadBf16DotFlag(b, module);
    bufs.rowPrefetch = loadRowPrefetchBytes(b, module);
    bufs.widenedTiles = loadBf16OnFma(b, module);
    if (spec.int8Dot)
      bufs.int8Dot = loadInt8DotFlag(b, module);
    bufs.useDot = arith::AndIOp::create(b, useTiles, bufs.rowDot);
    f32Tiles = arith::XOrIOp::create(b, useTiles, bufs.useDot);
  }
  auto rowsIf = [&](Value cond, int64_t rows) -> Value {
    Value all = constIndex(b, rows);
    Value none = constIndex(b, 0);
    return arith::SelectOp::create(b, cond, all, none);
  };
  unsigned numPanels = spec.epilogue == Epilogue::GatedGelu ? 2 : 1;
  for (unsigned i = 0; i < numPanels; ++i) {
    bufs.panels.push_back(memref::AllocOp::create(
        b, MemRefType::get({ShapedType::kDynamic, kTileRows}, b.getF32Type()),
        ValueRange{rowsIf(f32Tiles, spec.k)}, b.getI64IntegerAttr(64)));
    bufs.spills.push_back(memref::AllocaOp::create(
        b, MemRefType::get({kDotTileTokens, kTileRows}, b.getF32Type()),
        b.getI64IntegerAttr(64)));
  }
  Type yType = spec.yType;
  if (spec.epilogue == Epilogue::GatedGelu) {
    emitRows(b, spec, bufs, weights, outputs[0], rowBegin, rowEnd, tokens,
             [&](ImplicitLocOpBuilder &b, ValueRange dots, Value) -> Value {
               Value g = roundTo(b, dots[0], yType);
               Value u = roundTo(b, dots[1], yType);
               Value act = roundTo(b, emitGeluTanh(b, toF32(b, g)), yType);
               Value actF32 = toF32(b, act);
               Value p = arith::MulFOp::create(b, actF32, toF32(b, u));
               return roundTo(b, p, yType);
             });
  } else {
    // The weights' rows are concatenated: weight i owns [offset_i,
    // offset_i + rows_i) of [row_begin, row_end).
    int64_t offset = 0;
    for (auto [i, rows] : llvm::enumerate(spec.rows)) {
      Value off = constIndex(b, offset);
      Value end = constIndex(b, offset + rows);
      Value lo = arith::MaxSIOp::create(b, rowBegin, off);
      Value hi = arith::MinSIOp::create(b, rowEnd, end);
      hi = arith::MaxSIOp::create(b, hi, lo);
      Value localLo = arith::SubIOp::create(b, lo, off);
      Value localHi = arith::SubIOp::create(b, hi, off);
      emitRows(b, spec, bufs, {weights[i]}, outputs[i], localLo, localHi,
               tokens,
               [&](ImplicitLocOpBuilder &b, ValueRange dots, Value n) -> Value {
                 Value dot = dots[0];
                 // The bias joins the f32 sum before its one rounding.
                 if (bias) {
                   Value bv;
                   if (auto vec = dyn_cast<VectorType>(dot.getType()))
                     bv = vector::LoadOp::create(b, vec.clone(spec.biasType),
                                                 bias, ValueRange{n});
                   else
                     bv = memref::LoadOp::create(b, bias, ValueRange{n});
                   dot = arith::AddFOp::create(b, dot, toF32(b, bv));
                 }
                 Value y = roundTo(b, dot, yType);
                 if (spec.epilogue == Epilogue::Softcap)
                   y = emitSoftcap(b, y, spec.cap);
                 return y;
               });
      offset += rows;
    }
  }
  for (Value panel : bufs.panels)
    memref::DeallocOp::create(b, panel);
  func::ReturnOp::create(b);
  return func;
}
