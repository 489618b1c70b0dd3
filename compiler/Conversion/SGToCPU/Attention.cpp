//===- Attention.cpp - attention over a KV cache --------------------------===//
//
// Part of sgc. Query i of a chunk sits at p = pos0 + i. It sees the keys at
// positions j in [lo, p] with lo = max(0, p - window + 1) on sliding layers
// (0 on full layers): those before the chunk from the cache as it was before
// the chunk (ring slot j mod window, or slot j), the rest from the chunk.
// Masked keys contribute exp(-inf) = 0 in the reference, so visiting only the
// visible ones computes the same sums. With image-block ids a query of a
// block also visits the chunk's keys up to the chunk's end, and a predicate
// masks those ahead of it outside its block (score -inf, probability 0).
//
// A cache that holds V only (keys_from_values) has its keys rebuilt
// (RebuiltKeys.cpp): the chunk's once a call, the cached ones once per kv
// head and block of query rows, each scored against that kv head's query
// heads in range, which then weigh each value row together.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/AttentionRows.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::attention;

void attention::storeRoundedRow(ImplicitLocOpBuilder &b, Value zero, Value acc,
                                Value out, Value i, Value h, int64_t dv,
                                Type ct) {
  emitFor(b, zero, constIndex(b, dv), [&](ImplicitLocOpBuilder &b, Value dd) {
    Value a = memref::LoadOp::create(b, acc, ValueRange{dd});
    memref::StoreOp::create(b, roundTo(b, a, ct), out, ValueRange{i, h, dd});
  });
}

namespace {
using attention::kLanes;

/// What distinguishes the two attention ops.
/// Everything that distinguishes one attention kernel from another.
struct AttnSpec {
  int64_t hq, hkv, d, dv, slots, window;
  double scale;
  Type ct, cacheType;
  /// Whether the kernel takes image-block ids (a kernel of its own, so the
  /// text kernels keep their names and code).
  bool blocks;
  /// The cache holds V only: the kernel takes k_norm's weight (of
  /// `keyWeightType`) and rebuilds cached keys with this rotation.
  bool keysFromValues = false;
  Type keyWeightType;
  double keyTheta = 0;
  int64_t keyRotated = 0, keyBasis = 0;

  std::string name() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "attn_" << (window ? "w" + std::to_string(window) : "full") << "_"
       << hq << "x" << hkv << "x" << d << "x" << dv << "_s" << slots << "_"
       << ct << "_" << cacheType << (blocks ? "_blocks" : "") << "_"
       << llvm::utohexstr(llvm::bit_cast<uint64_t>(scale));
    if (keysFromValues)
      os << "_kfv" << keyRotated << "b" << keyBasis << "_" << keyWeightType
         << "_" << llvm::utohexstr(llvm::bit_cast<uint64_t>(keyTheta));
    return s;
  }
};

} // namespace

Value attention::emitDot(ImplicitLocOpBuilder &b, int64_t n, Value aBuf,
                         ValueRange aIdx, Value bBuf, ValueRange bIdx) {
  return emitChainedSum(b, n, kLanes, /*chains=*/1,
                        [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes,
                            Value acc) -> Value {
                          Value x =
                              toF32(b, emitRowLoad(b, aBuf, aIdx, col, lanes));
                          Value y =
                              toF32(b, emitRowLoad(b, bBuf, bIdx, col, lanes));
                          Value prod = arith::MulFOp::create(b, x, y);
                          return arith::AddFOp::create(b, acc, prod);
                        });
}

/// acc[dd] += p · f32(v[dd]) for dd in [0, n) (a multiply, then an add, per
/// element: the order over keys is the caller's).
void attention::emitAxpy(ImplicitLocOpBuilder &b, int64_t n, Value p, Value acc,
                         Value vBuf, ValueRange vIdx) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  Type elem = cast<MemRefType>(vBuf.getType()).getElementType();
  Value pv = vector::BroadcastOp::create(b, vecF32, p);
  int64_t nVec = n - n % kLanes;
  auto indices = [&](Value col) {
    SmallVector<Value> idx(vIdx);
    idx.push_back(col);
    return idx;
  };
  Value zero = constIndex(b, 0);
  Value blocks = constIndex(b, nVec / kLanes);
  emitFor(b, zero, blocks, [&](ImplicitLocOpBuilder &b, Value blk) {
    Value col = (IndexExpr(blk) * kLanes).emit(b);
    Value v =
        toF32(b, vector::LoadOp::create(b, VectorType::get({kLanes}, elem),
                                        vBuf, indices(col)));
    Value a = vector::LoadOp::create(b, vecF32, acc, ValueRange{col});
    Value sum =
        arith::AddFOp::create(b, a, Value(arith::MulFOp::create(b, pv, v)));
    vector::StoreOp::create(b, sum, acc, ValueRange{col});
  });
  Value tailBegin = constIndex(b, nVec);
  Value end = constIndex(b, n);
  emitFor(b, tailBegin, end, [&](ImplicitLocOpBuilder &b, Value col) {
    Value v = toF32(b, memref::LoadOp::create(b, vBuf, indices(col)));
    Value a = memref::LoadOp::create(b, acc, ValueRange{col});
    Value sum =
        arith::AddFOp::create(b, a, Value(arith::MulFOp::create(b, p, v)));
    memref::StoreOp::create(b, sum, acc, ValueRange{col});
  });
}

namespace {

/// Independent accumulators of a score's dot product.
constexpr int64_t kDotChains = 4;

/// dst[dd] = f32(src[idx..., dd]) for dd in [0, n).
void emitRowToF32(ImplicitLocOpBuilder &b, int64_t n, Value src, ValueRange idx,
                  Value dst) {
  emitRowChunks(b, n, [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
    emitRowStore(b, toF32(b, emitRowLoad(b, src, idx, col, lanes)), dst,
                 ValueRange{}, col);
  });
}

/// sum_d f32(q[qIdx..., d]) · f32(k[kIdx..., d]) over d in [0, n):
/// kDotChains 16-lane FMA chains along d (a query row against one key
/// without waiting on one chain's latency), summed as emitChainedSum does.
/// With bf16 rows every product is exact in f32.
Value emitQueryKeyDot(ImplicitLocOpBuilder &b, int64_t n, Value qBuf,
                      ValueRange qIdx, Value kBuf, ValueRange kIdx) {
  return emitChainedSum(b, n, kLanes, kDotChains,
                        [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes,
                            Value acc) -> Value {
                          Value kv =
                              toF32(b, emitRowLoad(b, kBuf, kIdx, col, lanes));
                          Value qv =
                              toF32(b, emitRowLoad(b, qBuf, qIdx, col, lanes));
                          if (lanes == 1)
                            return math::FmaOp::create(b, qv, kv, acc);
                          return vector::FMAOp::create(b, qv, kv, acc);
                        });
}

/// The query row as the bf16 dot product reads it: n / 32 vectors of 32
/// bf16 (16 pairs), loaded once per query and head, before its keys.
SmallVector<Value> loadQueryPairs(ImplicitLocOpBuilder &b, int64_t n,
                                  Value qBuf, ValueRange qIdx) {
  auto vecPairs = VectorType::get({2 * kLanes}, b.getBF16Type());
  SmallVector<Value> pairs;
  for (int64_t col = 0; col < n; col += 2 * kLanes) {
    SmallVector<Value> indices(qIdx);
    indices.push_back(constIndex(b, col));
    pairs.push_back(vector::LoadOp::create(b, vecPairs, qBuf, indices));
  }
  return pairs;
}

/// The same score from bf16 rows with vdpbf16ps (x86vector.avx512.dot):
/// q · k[kIdx..., :] with the query's pairs in registers, one dot product
/// per 32 columns into kDotChains chains of 16 f32 lanes (unrolled: a head
/// has a few hundred columns), no widening. Exact products, so only the
/// order of the f32 sum differs from emitQueryKeyDot.
Value emitQueryKeyDotBf16(ImplicitLocOpBuilder &b, ArrayRef<Value> qPairs,
                          Value kBuf, ValueRange kIdx) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kLanes}, b.getBF16Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> accs(kDotChains, zeroVec);
  for (auto [step, q] : llvm::enumerate(qPairs)) {
    SmallVector<Value> indices(kIdx);
    indices.push_back(constIndex(b, step * 2 * kLanes));
    Value kv = vector::LoadOp::create(b, vecPairs, kBuf, indices);
    Value &acc = accs[step % kDotChains];
    acc = x86vector::DotBF16Op::create(b, vecF32, acc, q, kv);
  }
  Value acc = accs[0];
  for (int64_t c = 1; c < kDotChains; ++c)
    acc = arith::AddFOp::create(b, acc, accs[c]);
  return vector::ReductionOp::create(b, vector::CombiningKind::ADD, acc,
                                     arith::FastMathFlags::reassoc);
}

/// Calls `body(t, lanes)` for t in [0, n), kLanes keys at a time (lanes =
/// kLanes) and then the rest one at a time (lanes = 1).
void emitKeyChunks(
    ImplicitLocOpBuilder &b, Value n,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, int64_t)> body) {
  Value nVec = (IndexExpr(n) / kLanes * kLanes).emit(b);
  Value zero = constIndex(b, 0);
  Value lanes = constIndex(b, kLanes);
  scf::ForOp::create(
      b, zero, nVec, lanes, ValueRange{},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange) {
        body(b, t, kLanes);
        scf::YieldOp::create(b);
      }));
  emitFor(b, nVec, n, [&](ImplicitLocOpBuilder &b, Value t) { body(b, t, 1); });
}

/// The `kind` reduction over t in [0, n) of `term(t, lanes)` (a vector of
/// kLanes terms, or one): kLanes lanes folded into a vector accumulator,
/// its horizontal reduction, then the rest one at a time; `init` is the
/// identity.
Value emitKeyReduction(
    ImplicitLocOpBuilder &b, Value n, float init, vector::CombiningKind kind,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value, int64_t)> term) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto combine = [&](ImplicitLocOpBuilder &b, Value a, Value x) -> Value {
    if (kind == vector::CombiningKind::ADD)
      return arith::AddFOp::create(b, a, x);
    return arith::MaximumFOp::create(b, a, x);
  };
  Value nVec = (IndexExpr(n) / kLanes * kLanes).emit(b);
  Value zero = constIndex(b, 0);
  Value lanes = constIndex(b, kLanes);
  auto vec = scf::ForOp::create(
      b, zero, nVec, lanes,
      ValueRange{arith::ConstantOp::create(
          b, vecF32, DenseElementsAttr::get(vecF32, init))},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange acc) {
        scf::YieldOp::create(b, combine(b, acc[0], term(b, t, kLanes)));
      }));
  Value folded = vector::ReductionOp::create(b, kind, vec.getResult(0),
                                             arith::FastMathFlags::reassoc);
  auto tail = scf::ForOp::create(
      b, nVec, n, constIndex(b, 1), ValueRange{folded},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange acc) {
        scf::YieldOp::create(b, combine(b, acc[0], term(b, t, 1)));
      }));
  return tail.getResult(0);
}

/// scores[t .. t + lanes) as a vector (or the scalar for lanes 1).
Value loadScores(ImplicitLocOpBuilder &b, Value scores, Value t,
                 int64_t lanes) {
  if (lanes == 1)
    return memref::LoadOp::create(b, scores, ValueRange{t});
  return vector::LoadOp::create(b, VectorType::get({lanes}, b.getF32Type()),
                                scores, ValueRange{t});
}

void storeScores(ImplicitLocOpBuilder &b, Value v, Value scores, Value t) {
  if (isa<VectorType>(v.getType()))
    vector::StoreOp::create(b, v, scores, ValueRange{t});
  else
    memref::StoreOp::create(b, v, scores, ValueRange{t});
}

} // namespace

Value attention::emitIfElse(
    ImplicitLocOpBuilder &b, Type type, Value cond,
    llvm::function_ref<Value(ImplicitLocOpBuilder &)> thenFn,
    llvm::function_ref<Value(ImplicitLocOpBuilder &)> elseFn) {
  auto ifOp = scf::IfOp::create(b, TypeRange{type}, cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, thenFn(b));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, elseFn(b));
  return ifOp.getResult(0);
}

namespace {

/// Whether key `j` (a position of the chunk, j > p) is masked for query row
/// `i`: it lies outside the query's image block, `bi = blocks[i]`. Keys at
/// or before the query are never masked by this predicate (the window's
/// lower bound is the loop's).
Value emitAheadMasked(ImplicitLocOpBuilder &b, Value blocks, Value bi, Value j,
                      Value p, Value pos0) {
  Value ahead = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, j, p);
  return emitIfElse(
      b, b.getI1Type(), ahead,
      [&](ImplicitLocOpBuilder &b) -> Value {
        Value row = arith::SubIOp::create(b, j, pos0);
        Value bj = memref::LoadOp::create(b, blocks, ValueRange{row});
        return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bj, bi);
      },
      [&](ImplicitLocOpBuilder &b) -> Value {
        return arith::ConstantOp::create(b, b.getBoolAttr(false));
      });
}

/// ceil(tokens / 2), the pairs of the chunk's rows.
Value pairCountOf(ImplicitLocOpBuilder &b, Value tokens) {
  return IndexExpr(tokens).ceilDiv(2).emit(b);
}

/// The chunk's value rows v[tokens, hkv, dv] packed in pairs for the weighted
/// sums' vdpbf16ps into `pairs` (PairedValues: the later row in the even
/// halves); once a call, as long as reading v.
void emitPackValuePairs(ImplicitLocOpBuilder &b, Value v, Value tokens,
                        Value pairs, int64_t hkv, int64_t dv) {
  auto half = VectorType::get({kLanes}, b.getBF16Type());
  Value one = constIndex(b, 1), two = constIndex(b, 2);
  Value zeros = arith::ConstantOp::create(
      b, half,
      DenseElementsAttr::get(half, b.getFloatAttr(b.getBF16Type(), 0.0)));
  Value pairCount = pairCountOf(b, tokens);
  emitFor(
      b, constIndex(b, 0), pairCount, [&](ImplicitLocOpBuilder &b, Value r) {
        Value early = arith::MulIOp::create(b, r, two);
        Value late = arith::AddIOp::create(b, early, one);
        Value lateInChunk =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, late, tokens);
        Value zero = constIndex(b, 0);
        Value groups = constIndex(b, hkv);
        emitFor(b, zero, groups, [&](ImplicitLocOpBuilder &b, Value g) {
          for (int64_t c = 0; c < dv; c += kLanes) {
            Value col = constIndex(b, c);
            Value e =
                vector::LoadOp::create(b, half, v, ValueRange{early, g, col});
            Value l = emitIfElse(
                b, half, lateInChunk,
                [&](ImplicitLocOpBuilder &b) -> Value {
                  return vector::LoadOp::create(b, half, v,
                                                ValueRange{late, g, col});
                },
                [&](ImplicitLocOpBuilder &) { return zeros; });
            Value interleaved = vector::InterleaveOp::create(b, l, e);
            vector::StoreOp::create(b, interleaved, pairs,
                                    ValueRange{r, g, constIndex(b, 2 * c)});
          }
        });
      });
}

/// The kernel `@sgc_attn_…(q, k, v, k_cache, v_cache, pos0[1], [blocks],
/// out, head_begin, head_end)`: query heads [head_begin, head_end) of every
/// token of the chunk; the glue spreads the heads over the threads.
func::FuncOp buildAttnKernel(OpBuilder &outer, ModuleOp module,
                             const AttnSpec &spec, StringRef name) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {
      MemRefType::get({dyn, spec.hq, spec.d}, spec.ct),
      MemRefType::get({dyn, spec.hkv, spec.d}, spec.ct),
      MemRefType::get({dyn, spec.hkv, spec.dv}, spec.ct),
      MemRefType::get({spec.slots, spec.hkv, spec.d}, spec.cacheType),
      MemRefType::get({spec.slots, spec.hkv, spec.dv}, spec.cacheType),
      MemRefType::get({1}, b.getI64Type())};
  if (spec.blocks)
    args.push_back(MemRefType::get({dyn}, b.getI32Type()));
  if (spec.keysFromValues)
    args.push_back(MemRefType::get({spec.d}, spec.keyWeightType));
  args.append({MemRefType::get({dyn, spec.hq, spec.dv}, spec.ct),
               b.getIndexType(), b.getIndexType()});
  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func =
      createKernelFunction(b, module, name, args, spec.name());
  Block *entry = &func.getBody().front();
  Value q = entry->getArgument(0), k = entry->getArgument(1);
  Value v = entry->getArgument(2), kc = entry->getArgument(3);
  Value vc = entry->getArgument(4), posBuf = entry->getArgument(5);
  unsigned next = 6;
  Value blocks = spec.blocks ? entry->getArgument(next++) : Value();
  RebuiltKeys rebuilt;
  if (spec.keysFromValues) {
    rebuilt.weight = entry->getArgument(next++);
    SmallVector<float> inv = inverseFrequencies(
        spec.d / 2, spec.keyRotated, spec.keyBasis, spec.keyTheta, 1.0);
    rebuilt.invFreq = memref::GetGlobalOp::create(
        b, MemRefType::get({spec.d / 2}, b.getF32Type()),
        getOrCreateInvFreqGlobal(b, module, b.getLoc(), inv));
    rebuilt.rotated = spec.keyRotated;
  }
  Value out = entry->getArgument(next++);
  Value headBegin = entry->getArgument(next++), headEnd = entry->getArgument(next++);
  Type ct = spec.ct;
  int64_t group = spec.hq / spec.hkv;
  bool ring = spec.window > 0;

  // Scores of one (query, head): at most the cached span plus the chunk.
  Value tokens = dimOf(b, q, 0);
  Value capacity = arith::AddIOp::create(
      b, constIndex(b, ring ? spec.window : spec.slots), tokens);
  // (A V-only cache's scores live in emitRebuiltKeyScores' blocks.)
  auto scoresType = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Value scores =
      spec.keysFromValues
          ? Value()
          : Value(memref::AllocOp::create(b, scoresType, ValueRange{capacity},
                                          b.getI64IntegerAttr(64)));
  Value qf =
      memref::AllocOp::create(b, MemRefType::get({spec.d}, b.getF32Type()),
                              ValueRange{}, b.getI64IntegerAttr(64));

  Value zero = constIndex(b, 0);
  Value pos0 = arith::IndexCastOp::create(
      b, b.getIndexType(),
      Value(memref::LoadOp::create(b, posBuf, ValueRange{zero})));
  // The chunk's keys rebuilt from its values once, as cached keys are.
  Value chunkKeys;
  if (spec.keysFromValues) {
    chunkKeys = memref::AllocOp::create(
        b, MemRefType::get({ShapedType::kDynamic, spec.hkv, spec.d}, ct),
        ValueRange{tokens}, b.getI64IntegerAttr(64));
    emitFor(b, zero, tokens, [&](ImplicitLocOpBuilder &b, Value t) {
      Value p = arith::AddIOp::create(b, pos0, t);
      emitFor(b, zero, constIndex(b, spec.hkv),
              [&](ImplicitLocOpBuilder &b, Value g) {
                emitRebuiltKey(b, rebuilt, spec.d, v, ValueRange{t, g}, p,
                               chunkKeys, ValueRange{t, g}, ct);
              });
    });
    k = chunkKeys;
  }
  Value scale = constF32(b, static_cast<float>(spec.scale));
  Value negInf = constF32(b, -std::numeric_limits<float>::infinity());
  Value windowIdx = constIndex(b, spec.window);
  Value dotFlag;
  if (ct.isBF16() && spec.cacheType.isBF16() && spec.d % (2 * kLanes) == 0)
    dotFlag = loadBf16DotFlag(b, module);
  // The chunk's value rows in pairs where the sums take vdpbf16ps (a K/V
  // cache; a V-only one sums a kv head's query heads together).
  Value valuePairs;
  if (dotFlag && !spec.keysFromValues && spec.dv % kLanes == 0) {
    // Empty in a variant without the dot (the flag folds per variant).
    Value pairCount =
        arith::SelectOp::create(b, dotFlag, pairCountOf(b, tokens), zero);
    valuePairs = memref::AllocOp::create(
        b,
        MemRefType::get({ShapedType::kDynamic, spec.hkv, 2 * spec.dv},
                        b.getBF16Type()),
        ValueRange{pairCount}, b.getI64IntegerAttr(64));
    auto ifOp = scf::IfOp::create(b, dotFlag, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitPackValuePairs(b, v, tokens, valuePairs, spec.hkv, spec.dv);
  }

  // Query row i of head h, its scores in `scores`; with `cachedScored`
  // the cached keys' scores are there already.
  auto attendRow = [&](ImplicitLocOpBuilder &b, Value h, Value i, Value scores,
                       bool cachedScored, bool weightedSum = true) {
    Value g = (IndexExpr(h) / group).emit(b);
    Value p = (IndexExpr(pos0) + i).emit(b);
    // lo = max(0, p - window + 1) on sliding layers.
    Value lo = zero;
    if (ring) {
      Value start = (IndexExpr(p) + 1 - spec.window).emit(b);
      Value positive =
          arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, start, zero);
      lo = arith::SelectOp::create(b, positive, start, zero);
    }
    // Keys lo..pos0-1 come from the cache, max(lo, pos0)..p from the chunk;
    // a query of an image block looks on to the chunk's end.
    Value hi = (IndexExpr(p) + 1).emit(b);
    Value bi;
    if (blocks) {
      bi = memref::LoadOp::create(b, blocks, ValueRange{i});
      Value inBlock = arith::CmpIOp::create(
          b, arith::CmpIPredicate::sge, bi,
          arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
      hi = arith::SelectOp::create(b, inBlock,
                                   (IndexExpr(pos0) + tokens).emit(b), hi);
    }
    Value numKeys = arith::SubIOp::create(b, hi, lo);
    auto slotOf = [&](ImplicitLocOpBuilder &b, Value j) -> Value {
      return ring ? Value(arith::RemUIOp::create(b, j, windowIdx)) : j;
    };
    // Keys [lo, cacheEnd) come from the cache, [cacheEnd, hi) from the
    // chunk; score t belongs to key lo + t.
    Value cacheEnd = arith::MaxSIOp::create(
        b, lo, Value(arith::MinSIOp::create(b, hi, pos0)));
    Value tCache = arith::SubIOp::create(b, cacheEnd, lo);
    emitRowToF32(b, spec.d, q, ValueRange{i, h}, qf);
    // q·k of one key: vdpbf16ps where the variant has it (bf16 rows; the
    // query's pairs are loaded either way, a variant without it drops
    // them).
    SmallVector<Value> qPairs;
    if (dotFlag)
      qPairs = loadQueryPairs(b, spec.d, q, ValueRange{i, h});
    auto queryKey = [&](ImplicitLocOpBuilder &b, Value keys,
                        ValueRange keyIdx) -> Value {
      if (!dotFlag)
        return emitQueryKeyDot(b, spec.d, qf, ValueRange{}, keys, keyIdx);
      return emitIfElse(
          b, b.getF32Type(), dotFlag,
          [&](ImplicitLocOpBuilder &b) {
            return emitQueryKeyDotBf16(b, qPairs, keys, keyIdx);
          },
          [&](ImplicitLocOpBuilder &b) {
            return emitQueryKeyDot(b, spec.d, qf, ValueRange{}, keys, keyIdx);
          });
    };
    // Pass 1: the dot products, the cached keys then the chunk's.
    if (!cachedScored)
      emitFor(b, zero, tCache, [&](ImplicitLocOpBuilder &b, Value t) {
        Value j = arith::AddIOp::create(b, lo, t);
        Value s = queryKey(b, kc, ValueRange{slotOf(b, j), g});
        memref::StoreOp::create(b, s, scores, ValueRange{t});
      });
    emitFor(b, tCache, numKeys, [&](ImplicitLocOpBuilder &b, Value t) {
      Value j = arith::AddIOp::create(b, lo, t);
      auto score = [&](ImplicitLocOpBuilder &b) -> Value {
        Value row = arith::SubIOp::create(b, j, pos0);
        return queryKey(b, k, ValueRange{row, g});
      };
      Value s;
      if (blocks) {
        Value masked = emitAheadMasked(b, blocks, bi, j, p, pos0);
        s = emitIfElse(
            b, b.getF32Type(), masked,
            [&](ImplicitLocOpBuilder &) { return negInf; }, score);
      } else {
        s = score(b);
      }
      memref::StoreOp::create(b, s, scores, ValueRange{t});
    });
    // The scores, 16 keys at a time: the reference rounds q·k and the
    // scaled score to its dtype (a masked key's -inf stays -inf); their
    // maximum.
    Value maxScore = emitKeyReduction(
        b, numKeys, -std::numeric_limits<float>::infinity(),
        vector::CombiningKind::MAXIMUMF,
        [&](ImplicitLocOpBuilder &b, Value t, int64_t lanes) {
          Value qk = loadScores(b, scores, t, lanes);
          Value sc =
              lanes > 1
                  ? Value(vector::BroadcastOp::create(b, qk.getType(), scale))
                  : scale;
          Value s = toF32(b, roundTo(b, qk, ct));
          s = toF32(b, roundTo(b, arith::MulFOp::create(b, s, sc), ct));
          storeScores(b, s, scores, t);
          return s;
        });
    // Pass 2: exponentials and their sum (softmax in f32), 16 keys at a
    // time.
    Value sum = emitKeyReduction(
        b, numKeys, 0.0f, vector::CombiningKind::ADD,
        [&](ImplicitLocOpBuilder &b, Value t, int64_t lanes) {
          Value s = loadScores(b, scores, t, lanes);
          Value m = maxScore;
          if (lanes > 1)
            m = vector::BroadcastOp::create(b, s.getType(), maxScore);
          Value e =
              math::ExpOp::create(b, Value(arith::SubFOp::create(b, s, m)));
          // A masked key weighs exactly 0 (the query's own key is never
          // masked, so the maximum is finite).
          if (blocks) {
            Value negInf = constF32Like(b, -INFINITY, s.getType());
            Value masked =
                arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, s, negInf);
            Value zero = constF32Like(b, 0.0f, s.getType());
            e = arith::SelectOp::create(b, masked, zero, e);
          }
          storeScores(b, e, scores, t);
          return e;
        });
    Value inv = arith::DivFOp::create(b, constF32(b, 1.0f), sum);
    // The probabilities, rounded to the dtype as the reference's are.
    emitKeyChunks(
        b, numKeys, [&](ImplicitLocOpBuilder &b, Value t, int64_t lanes) {
          Value e = loadScores(b, scores, t, lanes);
          Value invV = inv;
          if (lanes > 1)
            invV = vector::BroadcastOp::create(b, e.getType(), inv);
          storeScores(
              b, toF32(b, roundTo(b, arith::MulFOp::create(b, e, invV), ct)),
              scores, t);
        });
    // Pass 3: out = round(sum_t p_t · v_t), keys in order.
    ValueRun cached{
        zero, tCache, vc,
        [&](ImplicitLocOpBuilder &b, Value t) -> SmallVector<Value> {
          Value j = arith::AddIOp::create(b, lo, t);
          return {slotOf(b, j), g};
        }};
    ValueRun fresh{tCache, numKeys, v,
                   [&](ImplicitLocOpBuilder &b, Value t) -> SmallVector<Value> {
                     Value j = arith::AddIOp::create(b, lo, t);
                     return {Value(arith::SubIOp::create(b, j, pos0)), g};
                   }};
    if (!weightedSum)
      return;
    if (!valuePairs) {
      emitWeightedSum(b, spec.dv, scores, {cached, fresh}, out, i, h, ct);
      return;
    }
    auto ifOp = scf::IfOp::create(b, dotFlag, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    PairedValues paired{valuePairs, g, (IndexExpr(cacheEnd) - pos0).emit(b),
                        (IndexExpr(hi) - pos0 - 1).emit(b), tCache};
    emitWeightedSum(b, spec.dv, scores, {cached}, out, i, h, ct, &paired);
    b.setInsertionPointToStart(ifOp.elseBlock());
    emitWeightedSum(b, spec.dv, scores, {cached, fresh}, out, i, h, ct);
  };
  if (!spec.keysFromValues) {
    emitFor(b, headBegin, headEnd, [&](ImplicitLocOpBuilder &b, Value h) {
      emitFor(b, zero, tokens, [&](ImplicitLocOpBuilder &b, Value i) {
        attendRow(b, h, i, scores, /*cachedScored=*/false);
      });
    });
  } else {
    // The kv head's query heads score each rebuilt key.
    auto score = [&](ImplicitLocOpBuilder &b, Value i, Value h,
                     Value key) -> Value {
      auto plain = [&](ImplicitLocOpBuilder &b) {
        return emitQueryKeyDot(b, spec.d, q, ValueRange{i, h}, key,
                               ValueRange{});
      };
      if (!dotFlag)
        return plain(b);
      return emitIfElse(
          b, b.getF32Type(), dotFlag,
          [&](ImplicitLocOpBuilder &b) {
            return emitQueryKeyDotBf16(
                b, loadQueryPairs(b, spec.d, q, ValueRange{i, h}), key,
                ValueRange{});
          },
          plain);
    };
    // The kv head's query heads weigh each value row together (causal, no
    // image blocks: row i sees keys [0, pos0 + i]).
    bool groupSum = !spec.blocks && spec.dv % kLanes == 0;
    auto sumRow =
        [&](ImplicitLocOpBuilder &b, Value i, Value g, Value first, Value hLo,
            Value hHi,
            llvm::function_ref<Value(ImplicitLocOpBuilder &, int64_t)> rowOf) {
          Value numKeys = (IndexExpr(pos0) + i + 1).emit(b);
          ValueRun cached{
              zero, pos0, vc,
              [&](ImplicitLocOpBuilder &, Value t) -> SmallVector<Value> {
                return {t, g};
              }};
          ValueRun fresh{
              pos0, numKeys, v,
              [&](ImplicitLocOpBuilder &b, Value t) -> SmallVector<Value> {
                return {Value(arith::SubIOp::create(b, t, pos0)), g};
              }};
          emitGroupWeightedSum(b, spec.dv, group, rowOf, {cached, fresh}, out,
                               i, first, hLo, hHi, ct);
        };
    emitRebuiltKeyScores(
        b, rebuilt,
        {spec.d, group, ct, vc, pos0, tokens, capacity, headBegin, headEnd},
        score,
        [&](ImplicitLocOpBuilder &b, Value i, Value h, Value row) {
          attendRow(b, h, i, row, /*cachedScored=*/true,
                    /*weightedSum=*/!groupSum);
        },
        groupSum ? RowSumFn(sumRow) : RowSumFn());
    memref::DeallocOp::create(b, chunkKeys);
  }
  memref::DeallocOp::create(b, qf);
  if (valuePairs)
    memref::DeallocOp::create(b, valuePairs);
  if (scores)
    memref::DeallocOp::create(b, scores);
  func::ReturnOp::create(b);
  return func;
}

/// The dispatcher of the attention kernel for `spec` (defined by the glue,
/// which spreads the query heads over the threads).
func::FuncOp getOrCreateAttnDispatcher(OpBuilder &b, ModuleOp module,
                                       const AttnSpec &spec) {
  std::string name = "sgc_dispatch_" + spec.name();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  func::FuncOp kernel = buildAttnKernel(b, module, spec, "sgc_" + spec.name());
  // A head is long work: two are worth two threads.
  return declareDispatcher(b, module, kernel, name, spec.hq,
                           /*parallelRows=*/2);
}

} // namespace

static LogicalResult lowerAttention(Operation *op,
                                    const sg::AttentionParts &params,
                                    FunctionLowering &state) {
  Location loc = op->getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value q = state.lookup(params.q), k = state.lookup(params.k);
  Value v = state.lookup(params.v);
  Value kc = state.lookup(params.kCache), vc = state.lookup(params.vCache);
  Value out = state.bufferFor(loc, op->getResult(0));
  auto qType = cast<MemRefType>(q.getType());
  auto kcType = cast<MemRefType>(kc.getType());
  auto vType = cast<MemRefType>(v.getType());
  Value blocks = params.blocks ? state.lookup(params.blocks) : Value();
  AttnSpec spec{qType.getDimSize(1), kcType.getDimSize(1), qType.getDimSize(2),
                vType.getDimSize(2), kcType.getDimSize(0), params.window,
                params.scale, cast<MemRefType>(out.getType()).getElementType(),
                kcType.getElementType(), static_cast<bool>(blocks)};
  Value keyWeight;
  if (auto full = dyn_cast<sg::FullAttnOp>(op); full && full.keysFromValues()) {
    keyWeight = state.lookup(full.getKeyWeight());
    spec.keysFromValues = true;
    spec.keyWeightType = cast<MemRefType>(keyWeight.getType()).getElementType();
    KeyRotation rotation = keyRotationOf(full);
    spec.keyTheta = rotation.theta;
    spec.keyRotated = rotation.rotated;
    spec.keyBasis = rotation.basis;
    // emitCosSin reduces angles below 2^30 (position x inv_freq <= position).
    if (spec.slots >= (int64_t(1) << 30))
      return op->emitError("convert-sg-to-cpu: keys_from_values rebuilds "
                           "keys at positions below 2^30; this cache has ")
             << spec.slots << " slots";
  }
  if (cast<MemRefType>(vc.getType()).getElementType() != spec.cacheType ||
      cast<MemRefType>(vc.getType()).getDimSize(2) != spec.dv)
    return op->emitError("convert-sg-to-cpu: the V cache must match the "
                         "K cache's element type and the values' width");
  // The position travels as a one-element buffer (dispatchers pass buffers).
  Value posBuf =
      memref::AllocaOp::create(b, MemRefType::get({1}, b.getI64Type()));
  memref::StoreOp::create(b, state.lookup(params.position), posBuf,
                          ValueRange{constIndex(b, 0)});
  SmallVector<Value> args = {state.exec,
                             withDynamicTokens(b, q),
                             withDynamicTokens(b, k),
                             withDynamicTokens(b, v),
                             kc,
                             vc,
                             posBuf};
  if (blocks)
    args.push_back(withDynamicTokens(b, blocks));
  if (keyWeight)
    args.push_back(keyWeight);
  args.push_back(withDynamicTokens(b, out));
  func::CallOp::create(b, getOrCreateAttnDispatcher(b, state.module, spec),
                       args);
  state.buffers.map(op->getResult(0), out);
  return success();
}

/// sliding_attn and full_attn, through their interface.
template <typename OpT>
static LogicalResult lowerDecoderAttention(OpT op, FunctionLowering &state) {
  return lowerAttention(op, op.getAttention(), state);
}

ArrayRef<OpLowering> lowering::attentionLowerings() {
  static const OpLowering table[] = {
      loweringOf<sg::SlidingAttnOp, lowerDecoderAttention<sg::SlidingAttnOp>>(),
      loweringOf<sg::FullAttnOp, lowerDecoderAttention<sg::FullAttnOp>>(),
      loweringOf<sg::EncoderAttnOp, lowerEncoderAttention>()};
  return table;
}
