//===- AttnPrefill.cpp - prefill attention on tensor cores ----------------===//
//
// Part of sgc. `attn_prefill` (CUDA.md §4.5): the attention of a chunk of
// bf16 queries on tensor cores. The semantics are Attention.cpp's: query i
// of the call at p = pos0 + i sees keys j in [lo, p] (lo = max(0, p -
// window + 1) on sliding layers, else 0), those before pos0 from the cache
// as it was (ring slot j mod window, or slot j), the rest from the call's
// own rows; scores q.k rounded to bf16, times scale rounded again; softmax
// in f32 with the probabilities rounded to bf16 before they weight V; the
// output rounded.
//
// Two passes over the keys, so the probabilities are rounded after they
// are normalized as eager rounds them: pass 1 finds each row's max and sum
// (an online softmax over the tiles), pass 2 recomputes the scores and
// weights V. One pass (FA2) cannot round normalized probabilities, and
// even its exact f32 probabilities put tiny-gemma4's bf16 prefill logits
// at 1.2e-2 of the range from the reference, over the bound of 1.1e-2 (the
// reference's own bf16-vs-f32 difference). The second Q K^T makes it 1.5x
// the tensor-core work of one pass.
//
// A block takes `tile_queries` tokens of one kv head with the group's q
// heads stacked in M (row m: token m / group, head m % group), so every
// K/V tile serves all of them. Its warps form `row_groups` x `col_splits`:
// a row group owns 16 rows; a column split owns a slice of the head dims,
// both of the product Q K^T (its Q fragments live in registers) and of the
// output (its O fragments: 32 f32 registers at most, CUDA.md §4.5's split
// of D = 512). With several column splits the partial scores go through
// shared memory and every warp of the row group adds them in the same
// order, so all hold the same scores.
//
// Per tile of `tile_keys` keys (at multiples of tile_keys): K (and in pass
// 2 V) rows staged row-major in padded shared tiles (16-byte loads, zeros
// past the block's last key), S = Q K^T with mma.sync m16n8k16 (K
// fragments by ldmatrix), the reference's roundings and the mask; in pass
// 2, P as the A operand of P V (S's accumulator layout is the A
// fragment's) and V fragments by ldmatrix.trans (pairs along the keys, the
// "col" B operand).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/IndexExpr.h"
#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/SGToGPU/RebuiltKeys.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

namespace {
/// Warps of a block.
constexpr int64_t kWarps = 8;
/// bf16 elements per 16-byte load.
constexpr int64_t kChunk = 8;
/// Padding of a shared row, in elements: the 8 rows an ldmatrix reads fall
/// in distinct banks.
constexpr int64_t kPad = 8;
/// Blocks an SM keeps resident (ptxas' .minnctapersm): 2 x 256 threads at
/// up to 128 registers each.
constexpr int64_t kBlocksPerSM = 2;
/// 16-byte loads a thread keeps in flight while staging a tile.
constexpr int64_t kInFlight = 2;
/// Output columns a warp keeps (32 f32 registers of O fragments, and 16 of
/// Q's): 128 made 180 registers a thread at head_dim 256 and spilled when
/// capped at 128.
constexpr int64_t kWarpColumns = 64;
/// Registers a lane may spend on its fragments (Q, O, S and a tile's K):
/// at head_dim 256, 32-key tiles (96) took 138 registers, 16-key tiles
/// (72) 126.
constexpr int64_t kFragmentRegisters = 80;

struct PrefillShape {
  Value q, kNew, vNew, kCache, vCache;
  int64_t window = 0;
  double scale = 1.0;
  int64_t hq = 0, hkv = 0, d = 0, dv = 0, slots = 0, group = 0;
  int64_t colSplits = 0, rowGroups = 0, tileKeys = 0;
  /// A V-only cache: the keys rebuilt from V (kCache is vCache).
  KeyRebuildSpec rebuild;
  int64_t warps() const { return rowGroups * colSplits; }
  int64_t threads() const { return warps() * kWarp; }
  /// Query tokens of a block.
  int64_t tileQueries() const { return 16 * rowGroups / group; }
};

int64_t sharedBytes(const PrefillShape &s, int64_t keys) {
  int64_t bytes = keys * (s.d + kPad) * 2 + keys * (s.dv + kPad) * 2;
  if (s.colSplits > 1)
    bytes += s.rowGroups * s.colSplits * keys * 16 * 4;
  return bytes;
}

FailureOr<PrefillShape> shapeOf(Operation *op, const TargetContext &ctx) {
  auto attn = dyn_cast<sg::AttentionOpInterface>(op);
  if (!attn)
    return failure();
  sg::AttentionParts a = attn.getAttention();
  PrefillShape s;
  s.q = a.q, s.kNew = a.k, s.vNew = a.v, s.kCache = a.kCache,
  s.vCache = a.vCache, s.window = a.window, s.scale = a.scale;
  Value blocks = a.blocks;
  // Image blocks keep the per-query kernel (its mask); one token is decode.
  if (blocks || ctx.oneToken())
    return failure();
  for (Value v : {s.q, s.kNew, s.vNew, s.kCache, s.vCache,
                  Value(op->getResult(0))})
    if (!cast<ShapedType>(v.getType()).getElementType().isBF16())
      return failure();
  auto qType = cast<ShapedType>(s.q.getType());
  auto kcType = cast<ShapedType>(s.kCache.getType());
  auto vType = cast<ShapedType>(s.vNew.getType());
  s.hq = qType.getDimSize(1), s.d = qType.getDimSize(2);
  s.hkv = kcType.getDimSize(1), s.dv = vType.getDimSize(2);
  s.slots = kcType.getDimSize(0);
  if (s.hkv == 0 || s.hq % s.hkv != 0 || s.d % 16 != 0 || s.dv % 16 != 0)
    return failure();
  s.group = s.hq / s.hkv;
  s.rebuild = keyRebuildOf(op);
  if (s.rebuild && (s.d != s.dv || !s.rebuild.takesChunks(kChunk)))
    return failure();
  // A row group's 16 rows hold whole tokens.
  if (16 % s.group != 0)
    return failure();
  // Column splits: enough that a warp keeps at most kWarpColumns of O, each
  // a whole number of k16 steps of Q K^T and of 16-column ldmatrix tiles.
  for (int64_t c = std::max<int64_t>(1, (s.dv + kWarpColumns - 1) /
                                            kWarpColumns);
       c <= 8 && !s.colSplits; ++c)
    if (s.d % (16 * c) == 0 && s.dv % (16 * c) == 0)
      s.colSplits = c;
  if (!s.colSplits)
    return failure();
  // 8 warps: every staged K/V tile serves 16 x 8 / col_splits rows.
  s.rowGroups = std::max<int64_t>(1, kWarps / s.colSplits);
  for (int64_t keys : {64, 32, 16}) {
    // Q's, O's and S's fragments, and the K fragments of a tile (ptxas
    // loads them all ahead of the products).
    int64_t registers = s.d / (4 * s.colSplits) + s.dv / (2 * s.colSplits) +
                        keys / 2 + s.d / s.colSplits * keys / 64;
    if (registers <= kFragmentRegisters &&
        sharedBytes(s, keys) <= ctx.chip.staticSharedLimit) {
      s.tileKeys = keys;
      return s;
    }
  }
  return failure();
}

/// The kernel body.
class AttnPrefillBuilder {
public:
  AttnPrefillBuilder(KernelBody &k, const PrefillShape &s)
      : k(k), b(k.b), loc(k.loc), s(s) {}
  void build();

private:
  /// The query rows this lane holds (accumulator rows group and group + 8).
  struct Row {
    Value token, head, position, lo, live;
  };
  Row rowOf(Value m);
  /// The bf16 pair at (row, col) of q as the i32 of an A fragment (zero for
  /// a token past the call's).
  Value queryPair(const Row &r, Value col);
  /// 8 elements of key j's row at `col` (K or V): the cache before pos0,
  /// the call's row after it, zeros from `end` on.
  Value keyChunk(bool isK, Value j, Value col, Value end);
  /// Stages the K rows (and the V rows when `withV`) of the tile at kb.
  void stageTile(Value kb, Value end, bool withV);
  /// The tile's scores for this lane's accumulator elements (tile nt,
  /// element e: row e / 2, key kb + 8 nt + 2 quad + e % 2): staged, Q K^T
  /// with the column splits' parts added, rounded as the reference rounds
  /// them, -inf where masked. Ends with the tiles still being read: the
  /// caller's barrier frees them.
  SmallVector<Value> tileScores(Value kb, Value end, bool withV);
  /// ldmatrix x4 of `tile` at this lane's row address: four i32 registers.
  SmallVector<Value> ldmatrix(Value tile, Value row, Value col, bool trans);
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> acc);
  Value pack(Value lo, Value hi);
  Value quadReduce(Value v, bool max);

  KernelBody &k;
  ImplicitLocOpBuilder &b;
  Location loc;
  const PrefillShape &s;
  Value q, kNew, vNew, kCache, vCache, out, ks, vs, sx;
  std::optional<KeyRebuild> keys;
  Value g, lane, rowGroup, colSplit, group, quad, pos0, t0, col2;
  std::array<Row, 2> rows;
  /// This warp's Q fragments, one set of 4 per k16 step of its dims.
  SmallVector<SmallVector<Value>> qa;
  /// Lane offsets of the ldmatrix row addresses in the K and V tiles.
  Value kRow, kCol, vRow, vCol;
  int64_t qCols = 0, oCols = 0, sTiles = 0, oTiles = 0;
};

AttnPrefillBuilder::Row AttnPrefillBuilder::rowOf(Value m) {
  // Row m: the block's token m / group, q head g·group + m % group.
  IndexExpr row(m);
  Row r;
  r.token = k.index(IndexExpr(t0) + row / s.group);
  r.head = k.index(IndexExpr(g) * s.group + row % s.group);
  r.position = k.index(IndexExpr(pos0) + r.token);
  r.live = k.lessThan(r.token, k.numTokens);
  r.lo = k.firstKey(r.position, s.window);
  return r;
}

Value AttnPrefillBuilder::queryPair(const Row &r, Value col) {
  Type i32 = b.getI32Type();
  auto ifOp = scf::IfOp::create(b, TypeRange{i32}, r.live,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto v = vector::LoadOp::create(b, VectorType::get({2}, b.getBF16Type()), q,
                                  ValueRange{r.token, r.head, col});
  v.setAlignment(4);
  Value bits = vector::BitCastOp::create(b, VectorType::get({1}, i32), v);
  scf::YieldOp::create(
      b, Value(vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0})));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, Value(arith::ConstantIntOp::create(b, i32, 0)));
  return ifOp.getResult(0);
}

Value AttnPrefillBuilder::keyChunk(bool isK, Value j, Value col, Value end) {
  auto type = VectorType::get({kChunk}, b.getBF16Type());
  // A V-only cache: round(v · w_k) of V's row j, the key before its
  // rotation (tileScores rotates the staged tile).
  bool rebuilt = isK && keys;
  auto load = [&](Value buf, Value row) -> Value {
    auto loadAt = [&](Value at) -> Value {
      auto v = vector::LoadOp::create(b, type, buf, ValueRange{row, g, at});
      v.setAlignment(16);
      return v;
    };
    return rebuilt ? emitNormedKeyChunk(k, *keys, col, kChunk, loadAt(col))
                   : loadAt(col);
  };
  auto inside = scf::IfOp::create(b, TypeRange{type}, k.lessThan(j, end),
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inside.thenBlock());
  auto source = scf::IfOp::create(b, TypeRange{type}, k.lessThan(j, pos0),
                                  /*withElseRegion=*/true);
  scf::YieldOp::create(b, source.getResults());
  b.setInsertionPointToStart(source.thenBlock());
  Value slot = k.cacheSlot(j, s.window);
  scf::YieldOp::create(b, load(isK && !rebuilt ? kCache : vCache, slot));
  b.setInsertionPointToStart(source.elseBlock());
  Value row = k.index(IndexExpr(j) - pos0);
  scf::YieldOp::create(b, load(isK && !rebuilt ? kNew : vNew, row));
  // Keys past the block's last one: zeros, so masked probabilities (0)
  // never meet a NaN.
  b.setInsertionPointToStart(inside.elseBlock());
  scf::YieldOp::create(
      b, Value(arith::ConstantOp::create(
             b, type, DenseElementsAttr::get(type, APFloat(0.0f)))));
  return inside.getResult(0);
}

void AttnPrefillBuilder::stageTile(Value kb, Value end, bool withV) {
  Value tid = k.threadId(gpu::Dimension::x);
  int64_t threads = s.threads();
  for (bool isK : {true, false}) {
    if (!isK && !withV)
      continue;
    int64_t width = isK ? s.d : s.dv;
    int64_t perRow = width / kChunk;
    int64_t total = s.tileKeys * perRow;
    // A few loads in flight, then their stores: the registers of a whole
    // tile would be more than the fragments'.
    int64_t rounds = (total + threads - 1) / threads;
    for (int64_t first = 0; first < rounds; first += kInFlight) {
      SmallVector<std::pair<Value, Value>> places;
      SmallVector<Value> chunks;
      int64_t stop = std::min(rounds, first + kInFlight);
      for (int64_t c = first; c < stop; ++c) {
        IndexExpr linear(k.index(IndexExpr(tid) + c * threads));
        Value row = k.index(linear / perRow);
        Value col = k.index(linear % perRow * kChunk);
        // A last round that not every thread takes reads nothing past the
        // tile: its rows are clamped, then not stored.
        if ((c + 1) * threads > total)
          row = arith::MinUIOp::create(b, row, k.index(s.tileKeys - 1));
        places.push_back({row, col});
        Value key = k.index(IndexExpr(kb) + row);
        chunks.push_back(keyChunk(isK, key, col, end));
      }
      for (int64_t c = first; c < stop; ++c) {
        auto store = [&] {
          auto [row, col] = places[c - first];
          auto st = vector::StoreOp::create(b, chunks[c - first], isK ? ks : vs,
                                            ValueRange{row, col});
          st.setAlignment(16);
        };
        if ((c + 1) * threads > total)
          k.ifThen(k.lessThan(tid, k.index(total - c * threads)), store);
        else
          store();
      }
    }
  }
}

SmallVector<Value> AttnPrefillBuilder::ldmatrix(Value tile, Value row,
                                                Value col, bool trans) {
  auto type = VectorType::get({4, 2}, b.getBF16Type());
  Value m =
      nvgpu::LdMatrixOp::create(b, type, tile, ValueRange{row, col}, trans, 4);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i) {
    Value pair = vector::ExtractOp::create(b, m, ArrayRef<int64_t>{i});
    Value bits = vector::BitCastOp::create(
        b, VectorType::get({1}, b.getI32Type()), pair);
    regs.push_back(vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0}));
  }
  return regs;
}

SmallVector<Value> AttnPrefillBuilder::mma(ArrayRef<Value> a,
                                           ArrayRef<Value> bFrag,
                                           ArrayRef<Value> acc) {
  Type f32 = b.getF32Type();
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = NVVM::MmaOp::create(
      b, result, a, bFrag, acc, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
      std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, op, i));
  return d;
}

Value AttnPrefillBuilder::pack(Value lo, Value hi) {
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, b.getF32Type()), ValueRange{lo, hi});
  Value rounded = roundTo(b, pair, b.getBF16Type());
  Value bits = vector::BitCastOp::create(
      b, VectorType::get({1}, b.getI32Type()), rounded);
  return vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0});
}

Value AttnPrefillBuilder::quadReduce(Value v, bool max) {
  // A row's columns are spread over the 4 lanes of its quad.
  for (int32_t offset : {1, 2}) {
    Value other =
        gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = max ? Value(arith::MaximumFOp::create(b, v, other))
            : Value(arith::AddFOp::create(b, v, other));
  }
  return v;
}

SmallVector<Value> AttnPrefillBuilder::tileScores(Value kb, Value end,
                                                  bool withV) {
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  stageTile(kb, end, withV);
  gpu::BarrierOp::create(b);
  if (keys) {
    emitRotateKeyTile(k, *keys, ks, s.tileKeys, kb,
                      k.threadId(gpu::Dimension::x), s.threads());
    gpu::BarrierOp::create(b);
  }

  // S = Q K^T over this warp's dims.
  SmallVector<Value> acc(sTiles * 4, k.f32(0.0f));
  for (int64_t st = 0; st < qCols / 16; ++st)
    for (int64_t nt = 0; nt < sTiles; nt += 2) {
      Value row = k.index(IndexExpr(kRow) + 8 * nt);
      Value col = k.index(IndexExpr(kCol) + 16 * st);
      SmallVector<Value> r = ldmatrix(ks, row, col, /*trans=*/false);
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<Value> d = mma(qa[st], {r[2 * h], r[2 * h + 1]},
                                   ArrayRef<Value>(acc).slice((nt + h) * 4, 4));
        std::copy(d.begin(), d.end(), acc.begin() + (nt + h) * 4);
      }
    }
  if (s.colSplits > 1) {
    // Every warp of the row group adds the parts in split order: the same
    // bits in each.
    auto v4 = VectorType::get({4}, f32);
    for (int64_t nt = 0; nt < sTiles; ++nt) {
      Value part = vector::FromElementsOp::create(
          b, v4, ArrayRef<Value>(acc).slice(nt * 4, 4));
      auto st = vector::StoreOp::create(
          b, part, sx,
          ValueRange{rowGroup, colSplit, k.index(nt), lane, k.index(0)});
      st.setAlignment(16);
    }
    gpu::BarrierOp::create(b);
    for (int64_t nt = 0; nt < sTiles; ++nt) {
      Value sum;
      for (int64_t c = 0; c < s.colSplits; ++c) {
        auto part = vector::LoadOp::create(
            b, v4, sx,
            ValueRange{rowGroup, k.index(c), k.index(nt), lane, k.index(0)});
        part.setAlignment(16);
        sum = c == 0 ? Value(part) : Value(arith::AddFOp::create(b, sum, part));
      }
      for (int64_t e = 0; e < 4; ++e)
        acc[nt * 4 + e] =
            vector::ExtractOp::create(b, sum, ArrayRef<int64_t>{e});
    }
  }

  // Rounded to bf16, scaled and rounded again; the mask, on 32-bit offsets
  // from the lane's first key (kb + 2 quad): row h sees offsets in [lo_h -
  // base, p_h - base].
  float negInf = -std::numeric_limits<float>::infinity();
  Value scale = k.f32(static_cast<float>(s.scale));
  Type i32 = b.getI32Type();
  auto narrow = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, i32, v);
  };
  Value base = narrow(k.index(IndexExpr(kb) + col2));
  std::array<Value, 2> first, last;
  for (int64_t h = 0; h < 2; ++h) {
    last[h] = arith::SubIOp::create(b, narrow(rows[h].position), base);
    if (s.window > 0)
      first[h] = arith::SubIOp::create(b, narrow(rows[h].lo), base);
  }
  SmallVector<Value> score(sTiles * 4);
  for (int64_t nt = 0; nt < sTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e) {
      Value v = toF32(b, roundTo(b, acc[nt * 4 + e], bf16));
      if (s.scale != 1.0)
        v = toF32(b, roundTo(b, arith::MulFOp::create(b, v, scale), bf16));
      Value offset = arith::ConstantIntOp::create(b, i32, 8 * nt + e % 2);
      Value visible = arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                                            offset, last[e / 2]);
      if (s.window > 0)
        visible = arith::AndIOp::create(
            b, visible,
            arith::CmpIOp::create(b, arith::CmpIPredicate::sge, offset,
                                  first[e / 2]));
      score[nt * 4 + e] = arith::SelectOp::create(b, visible, v, k.f32(negInf));
    }
  return score;
}

void AttnPrefillBuilder::build() {
  q = k.params[0], kNew = k.params[1], vNew = k.params[2];
  kCache = k.params[3], vCache = k.params[4];
  unsigned inputs = 5;
  if (s.rebuild)
    keys = keyRebuildIn(k, s.rebuild, k.params[inputs++], b.getBF16Type());
  out = k.params[inputs];
  // Every input is only read here (the chunk's cache write is a later
  // launch) and none is the output: read-only loads.
  for (unsigned i = 0; i < inputs; ++i) {
    k.func.setArgAttr(1 + i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      b.getUnitAttr());
    k.func.setArgAttr(1 + i, LLVM::LLVMDialect::getReadonlyAttrName(),
                      b.getUnitAttr());
  }
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  qCols = s.d / s.colSplits, oCols = s.dv / s.colSplits;
  sTiles = s.tileKeys / 8, oTiles = oCols / 8;
  ks = k.sharedBuffer({s.tileKeys, s.d + kPad}, bf16);
  vs = k.sharedBuffer({s.tileKeys, s.dv + kPad}, bf16);
  if (s.colSplits > 1)
    sx = k.sharedBuffer({s.rowGroups, s.colSplits, sTiles, kWarp, 4}, f32);

  // Block (g, y): kv head g, tokens from y·tile_queries. Thread tid: warp
  // (row group, column split), lane (group, quad) as mma.sync's fragments
  // name them.
  g = k.blockId(gpu::Dimension::x);
  t0 = k.index(IndexExpr(k.blockId(gpu::Dimension::y)) * s.tileQueries());
  IndexExpr tid(k.threadId(gpu::Dimension::x));
  IndexExpr warp(k.index(tid / kWarp));
  lane = k.index(tid % kWarp);
  rowGroup = k.index(warp / s.colSplits);
  colSplit = k.index(warp % s.colSplits);
  group = k.index(IndexExpr(lane) / 4);
  quad = k.index(IndexExpr(lane) % 4);
  col2 = k.index(IndexExpr(quad) * 2);

  // Blocks past the call's tokens have nothing to do (the same in every
  // thread of a block, so the barriers inside are uniform).
  k.ifThen(k.lessThan(t0, k.numTokens), [&] {
    pos0 = k.position();
    // The lane's accumulator rows: group and group + 8 of its row group.
    Value m0 = k.index(IndexExpr(rowGroup) * 16 + group);
    rows[0] = rowOf(m0);
    rows[1] = rowOf(k.index(IndexExpr(m0) + 8));

    // This warp's Q fragments: its slice of the head dims, k16 steps.
    Value qBase = k.index(IndexExpr(colSplit) * qCols + col2);
    for (int64_t st = 0; st < qCols / 16; ++st) {
      Value c0 = k.index(IndexExpr(qBase) + 16 * st);
      Value c8 = k.index(IndexExpr(c0) + 8);
      qa.push_back({queryPair(rows[0], c0), queryPair(rows[1], c0),
                    queryPair(rows[0], c8), queryPair(rows[1], c8)});
    }

    // The block's keys: from the first query's lo to the last live query.
    Value blockEnd = k.index(IndexExpr(t0) + s.tileQueries());
    Value last = arith::MinUIOp::create(b, blockEnd, k.numTokens);
    Value end = k.index(IndexExpr(pos0) + last);
    Value begin = s.window > 0
                      ? k.firstKey(k.index(IndexExpr(pos0) + t0), s.window)
                      : k.index(0);
    // Tiles at multiples of tile_keys: a query meets its keys in the same
    // tiles and lanes whatever block (and chunk) it is in, so chunked
    // prefill gives the bits of a single chunk (masked tiles change
    // nothing).
    begin = k.index(IndexExpr(begin) / s.tileKeys * s.tileKeys);

    // ldmatrix row addresses. K (x4): matrices (keys 0-7, dims 0-7), (0-7,
    // 8-15), (8-15, 0-7), (8-15, 8-15), giving b0, b1 of two 8-key tiles.
    // V (x4.trans): (keys 0-7, dims 0-7), (8-15, 0-7), (0-7, 8-15), (8-15,
    // 8-15), giving b0, b1 of two 8-dim tiles.
    // Lane l addresses row l % 8 of matrix l / 8: bit 3 of l picks the
    // second 8 of one dimension, bit 4 of the other.
    IndexExpr l8(k.index(IndexExpr(lane) % 8));
    IndexExpr bit3(k.index(IndexExpr(lane) / 8 % 2));
    IndexExpr bit4(k.index(IndexExpr(lane) / 16));
    kRow = k.index(bit4 * 8 + l8);
    kCol = k.index(IndexExpr(colSplit) * qCols + bit3 * 8);
    vRow = k.index(bit3 * 8 + l8);
    vCol = k.index(IndexExpr(colSplit) * oCols + bit4 * 8);

    // Pass 1: each row's max and sum (an online softmax: running max m,
    // the sum l rescaled when m grows; l is this lane's part).
    float negInf = -std::numeric_limits<float>::infinity();
    Value tileStep = k.index(s.tileKeys);
    SmallVector<Value> statsInit = {k.f32(negInf), k.f32(negInf), k.f32(0.0f),
                                    k.f32(0.0f)};
    auto stats = scf::ForOp::create(
        b, begin, end, tileStep, statsInit,
        [&](OpBuilder &, Location, Value kb, ValueRange iter) {
          SmallVector<Value> score = tileScores(kb, end, /*withV=*/false);
          SmallVector<Value> next(4);
          for (int64_t h = 0; h < 2; ++h) {
            Value mx = iter[h];
            for (int64_t nt = 0; nt < sTiles; ++nt)
              for (int64_t e = 2 * h; e < 2 * h + 2; ++e)
                mx = arith::MaximumFOp::create(b, mx, score[nt * 4 + e]);
            mx = quadReduce(mx, /*max=*/true);
            // A row with no key yet keeps -inf and exponentiates against
            // 0: 0s, not NaNs.
            Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx,
                                               k.f32(negInf));
            Value ref = arith::SelectOp::create(b, none, k.f32(0.0f), mx);
            Value sum = arith::MulFOp::create(
                b, iter[2 + h],
                Value(math::ExpOp::create(
                    b, Value(arith::SubFOp::create(b, iter[h], ref)))));
            for (int64_t nt = 0; nt < sTiles; ++nt)
              for (int64_t e = 2 * h; e < 2 * h + 2; ++e)
                sum = arith::AddFOp::create(
                    b, sum,
                    Value(math::ExpOp::create(
                        b, Value(arith::SubFOp::create(b, score[nt * 4 + e],
                                                       ref)))));
            next[h] = mx;
            next[2 + h] = sum;
          }
          // Nobody may read the K tile the next step overwrites (with
          // column splits the exchange's barrier saw every read).
          if (s.colSplits == 1)
            gpu::BarrierOp::create(b);
          scf::YieldOp::create(b, next);
        });
    std::array<Value, 2> rowMax, inv;
    for (int64_t h = 0; h < 2; ++h) {
      rowMax[h] = stats.getResult(h);
      Value sum = quadReduce(stats.getResult(2 + h), /*max=*/false);
      inv[h] = arith::DivFOp::create(b, k.f32(1.0f), sum);
    }

    // Pass 2: P = bf16(exp(s - max) / sum) as the reference rounds it, the
    // A operand of P V (the accumulator layout of S is the A fragment's:
    // tiles 2 kt and 2 kt + 1 are k16 step kt).
    SmallVector<Value> init(oTiles * 4, k.f32(0.0f));
    auto loop = scf::ForOp::create(
        b, begin, end, tileStep, init,
        [&](OpBuilder &, Location, Value kb, ValueRange iter) {
          SmallVector<Value> score = tileScores(kb, end, /*withV=*/true);
          SmallVector<Value> p(score.size());
          for (size_t i = 0; i < score.size(); ++i) {
            int64_t h = (i % 4) / 2;
            p[i] = arith::MulFOp::create(
                b,
                Value(math::ExpOp::create(
                    b, Value(arith::SubFOp::create(b, score[i], rowMax[h])))),
                inv[h]);
          }
          SmallVector<Value> o(iter);
          for (int64_t kt = 0; kt < sTiles / 2; ++kt) {
            SmallVector<Value> a = {
                pack(p[8 * kt + 0], p[8 * kt + 1]),
                pack(p[8 * kt + 2], p[8 * kt + 3]),
                pack(p[8 * kt + 4], p[8 * kt + 5]),
                pack(p[8 * kt + 6], p[8 * kt + 7])};
            for (int64_t nt = 0; nt < oTiles; nt += 2) {
              Value row = k.index(IndexExpr(vRow) + 16 * kt);
              Value col = k.index(IndexExpr(vCol) + 8 * nt);
              SmallVector<Value> r = ldmatrix(vs, row, col, /*trans=*/true);
              for (int64_t h = 0; h < 2; ++h) {
                SmallVector<Value> d =
                    mma(a, {r[2 * h], r[2 * h + 1]},
                        ArrayRef<Value>(o).slice((nt + h) * 4, 4));
                std::copy(d.begin(), d.end(), o.begin() + (nt + h) * 4);
              }
            }
          }
          // Nobody may read the tiles the next step overwrites.
          gpu::BarrierOp::create(b);
          scf::YieldOp::create(b, o);
        });

    // The rounded output, bf16 pairs of the live rows.
    Value oBase = k.index(IndexExpr(colSplit) * oCols + col2);
    for (int64_t h = 0; h < 2; ++h) {
      const Row &r = rows[h];
      k.ifThen(r.live, [&] {
        for (int64_t nt = 0; nt < oTiles; ++nt) {
          Value pair =
              roundTo(b,
                      vector::FromElementsOp::create(
                          b, VectorType::get({2}, f32),
                          ValueRange{loop.getResult(nt * 4 + 2 * h),
                                     loop.getResult(nt * 4 + 2 * h + 1)}),
                      bf16);
          Value col = k.index(IndexExpr(oBase) + 8 * nt);
          auto st = vector::StoreOp::create(b, pair, out,
                                            ValueRange{r.token, r.head, col});
          st.setAlignment(4);
        }
      });
    }
  });
}
} // namespace

bool gpu_kernels::attnPrefillApplies(Operation *op,
                                     const TargetContext &ctx) {
  return succeeded(shapeOf(op, ctx));
}

FailureOr<KernelUse> gpu_kernels::emitAttnPrefill(Operation *op,
                                                  EmitContext &ctx) {
  FailureOr<PrefillShape> shape = shapeOf(op, ctx);
  if (failed(shape))
    return op->emitError("convert-sg-to-gpu: no attn_prefill kernel for this "
                         "attention");
  const PrefillShape &s = *shape;
  KernelModule &km = ctx.kernels;
  SmallVector<Value> ins = {s.q, s.kNew, s.vNew, s.kCache, s.vCache};
  if (s.rebuild)
    ins.push_back(s.rebuild.weight);
  SmallVector<Type> params;
  for (Value v : ins)
    params.push_back(km.paramType(v, ctx.maxTokens));
  params.push_back(km.paramType(op->getResult(0), ctx.maxTokens));

  Builder a(op->getContext());
  SmallVector<NamedAttribute> specAttrs(
      {a.getNamedAttr("q_heads", a.getI64IntegerAttr(s.hq)),
       a.getNamedAttr("kv_heads", a.getI64IntegerAttr(s.hkv)),
       a.getNamedAttr("head_dim", a.getI64IntegerAttr(s.d)),
       a.getNamedAttr("v_head_dim", a.getI64IntegerAttr(s.dv)),
       a.getNamedAttr("slots", a.getI64IntegerAttr(s.slots)),
       a.getNamedAttr("window", a.getI64IntegerAttr(s.window)),
       a.getNamedAttr("scale", a.getF64FloatAttr(s.scale)),
       a.getNamedAttr("tile_queries", a.getI64IntegerAttr(s.tileQueries())),
       a.getNamedAttr("tile_keys", a.getI64IntegerAttr(s.tileKeys)),
       a.getNamedAttr("row_groups", a.getI64IntegerAttr(s.rowGroups)),
       a.getNamedAttr("col_splits", a.getI64IntegerAttr(s.colSplits))});
  s.rebuild.appendSpecAttrs(a, specAttrs);
  auto spec = a.getDictionaryAttr(specAttrs);

  KernelUse use;
  use.kernel = km.getOrCreate("attn_prefill", spec, params,
                              {s.threads(), 1, 1}, ctx.oneToken(),
                              [&](KernelBody &k) {
                                AttnPrefillBuilder(k, s).build();
                              });
  // Two blocks an SM (kFragmentRegisters' design): ptxas holds the kernel
  // to 128 registers a thread rather than whatever its schedule reaches.
  use.kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      a.getI32IntegerAttr(kBlocksPerSM));
  use.ins = ins;
  use.outs = {op->getResult(0)};
  use.grid = {s.hkv, (ctx.maxTokens + s.tileQueries() - 1) / s.tileQueries(),
              1};
  // Blocks cover tile_queries tokens each: the grid stays at the chunk's
  // maximum and blocks past the call's tokens return at once.
  use.tokenGridDim = -1;
  use.block = {s.threads(), 1, 1};
  return use;
}
