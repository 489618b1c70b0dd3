//===- WeightedSums.cpp - attention's sums of probability x value ---------===//
//
// Part of sgc. The last pass of the CPU attention kernels: each query head's
// output is the sum over its keys of probability x value row, the f32 sums
// of a column block kept in registers across every key, one FMA a value in
// key order (exact products with bf16 operands). The kv head's query heads
// can share each value load (emitGroupWeightedSum): the same FMAs in the
// same order, so the same bits. Where the chunk's value rows come packed in
// pairs (PairedValues), its keys take one vdpbf16ps per 16 columns and two
// keys instead of a widening and an FMA per key.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/AttentionRows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::attention;

namespace {
/// Vectors of kLanes values the weighted sum over values keeps in registers
/// while it walks the keys (8 x 16 f32: 8 independent FMA chains).
constexpr int64_t kSumVectors = 8;
/// Vectors of kLanes columns a group's weighted sums keep per head (8 heads
/// x 2 vectors of sums in registers).
constexpr int64_t kGroupSumVectors = 2;
} // namespace

namespace {
/// The probabilities of chunk rows 2r and 2r + 1 as the bf16 pair of one
/// f32 lane, vdpbf16ps's order: the later key in the low (even) half, the
/// earlier in the high (odd) half, which the instruction adds first. The
/// probabilities are bf16 values held in f32, so their high halves are their
/// bf16 bits; a row outside [rowBegin, rowLast] weighs 0.
Value emitProbabilityPair(ImplicitLocOpBuilder &b, Value probs,
                          const PairedValues &paired, Value r) {
  Type i32 = b.getI32Type();
  Value early = (IndexExpr(r) * 2).emit(b);
  Value late = (IndexExpr(r) * 2 + 1).emit(b);
  auto bitsOf = [&](Value row, Value valid) -> Value {
    // Clamped into the scores row before the load; the select drops it.
    Value clamped = arith::MinUIOp::create(b, row, paired.rowLast);
    clamped = arith::MaxUIOp::create(b, clamped, paired.rowBegin);
    Value t = (IndexExpr(clamped) - paired.rowBegin + paired.tBegin).emit(b);
    Value p = memref::LoadOp::create(b, probs, ValueRange{t});
    Value bits = arith::BitcastOp::create(b, i32, p);
    return arith::SelectOp::create(
        b, valid, bits, arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
  };
  Value earlyBits =
      bitsOf(early, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, early,
                                          paired.rowBegin));
  Value lateBits =
      bitsOf(late, arith::CmpIOp::create(b, arith::CmpIPredicate::ule, late,
                                         paired.rowLast));
  // One op a statement: the IR's order must not depend on the host
  // compiler's order of evaluating arguments.
  Value high = arith::AndIOp::create(
      b, earlyBits,
      arith::ConstantOp::create(b, b.getI32IntegerAttr(0xFFFF0000)));
  Value low = arith::ShRUIOp::create(
      b, lateBits, arith::ConstantOp::create(b, b.getI32IntegerAttr(16)));
  Value pair = arith::OrIOp::create(b, high, low);
  Value lanes =
      vector::BroadcastOp::create(b, VectorType::get({kLanes}, i32), pair);
  return vector::BitCastOp::create(
      b, VectorType::get({2 * kLanes}, b.getBF16Type()), lanes);
}

/// The column block [c0, c0 + vectors x kLanes) of the paired rows' sums
/// added to `accs`, a pair of rows at a time.
SmallVector<Value> emitPairedSums(ImplicitLocOpBuilder &b, Value probs,
                                  const PairedValues &paired, int64_t c0,
                                  ValueRange accs) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kLanes}, b.getBF16Type());
  Value rBegin = (IndexExpr(paired.rowBegin) / 2).emit(b);
  Value rEnd = (IndexExpr(paired.rowLast) / 2 + 1).emit(b);
  auto loop = scf::ForOp::create(
      b, rBegin, rEnd, constIndex(b, 1), accs,
      implicitLoc([&](ImplicitLocOpBuilder &b, Value r, ValueRange iter) {
        Value p = emitProbabilityPair(b, probs, paired, r);
        SmallVector<Value> next;
        for (auto [v, acc] : llvm::enumerate(iter)) {
          Value col = constIndex(b, 2 * (c0 + int64_t(v) * kLanes));
          Value vv = vector::LoadOp::create(b, vecPairs, paired.pairs,
                                            ValueRange{r, paired.g, col});
          next.push_back(x86vector::DotBF16Op::create(b, vecF32, acc, p, vv));
        }
        scf::YieldOp::create(b, next);
      }));
  return SmallVector<Value>(loop.getResults());
}
} // namespace

void attention::emitWeightedSum(ImplicitLocOpBuilder &b, int64_t dv,
                                Value probs, ArrayRef<ValueRun> runs, Value out,
                                Value i, Value h, Type ct,
                                const PairedValues *paired) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  int64_t dVec = dv - dv % kLanes;
  assert((!paired || dVec == dv) && "paired rows need whole vectors");
  for (int64_t c0 = 0; c0 < dVec; c0 += kSumVectors * kLanes) {
    int64_t vectors = std::min(kSumVectors, (dVec - c0) / kLanes);
    SmallVector<Value> accs(vectors, zeroVec);
    for (const ValueRun &run : runs) {
      Type elem = cast<MemRefType>(run.vBuf.getType()).getElementType();
      auto loop = scf::ForOp::create(
          b, run.tBegin, run.tEnd, constIndex(b, 1), accs,
          implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange iter) {
            Value pv = vector::BroadcastOp::create(
                b, vecF32, memref::LoadOp::create(b, probs, ValueRange{t}));
            SmallVector<Value> row = run.rowOf(b, t);
            SmallVector<Value> next;
            for (int64_t v = 0; v < vectors; ++v) {
              SmallVector<Value> idx(row);
              idx.push_back(constIndex(b, c0 + v * kLanes));
              Value vv = toF32(
                  b, vector::LoadOp::create(b, VectorType::get({kLanes}, elem),
                                            run.vBuf, idx));
              next.push_back(vector::FMAOp::create(b, pv, vv, iter[v]));
            }
            scf::YieldOp::create(b, next);
          }));
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (paired)
      accs = emitPairedSums(b, probs, *paired, c0, accs);
    for (int64_t v = 0; v < vectors; ++v) {
      Value y = roundTo(b, accs[v], ct);
      vector::StoreOp::create(b, y, out,
                              ValueRange{i, h, constIndex(b, c0 + v * kLanes)});
    }
  }
  for (int64_t col = dVec; col < dv; ++col) {
    Value sum = constF32(b, 0.0f);
    for (const ValueRun &run : runs) {
      auto loop = scf::ForOp::create(
          b, run.tBegin, run.tEnd, constIndex(b, 1), ValueRange{sum},
          implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange iter) {
            Value pt = memref::LoadOp::create(b, probs, ValueRange{t});
            SmallVector<Value> idx = run.rowOf(b, t);
            idx.push_back(constIndex(b, col));
            Value vv = toF32(b, memref::LoadOp::create(b, run.vBuf, idx));
            scf::YieldOp::create(
                b, Value(math::FmaOp::create(b, pt, vv, iter[0])));
          }));
      sum = loop.getResult(0);
    }
    Value y = roundTo(b, sum, ct);
    memref::StoreOp::create(b, y, out, ValueRange{i, h, constIndex(b, col)});
  }
}

void attention::emitGroupWeightedSum(
    ImplicitLocOpBuilder &b, int64_t dv, int64_t group,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, int64_t)> probsOf,
    ArrayRef<ValueRun> runs, Value out, Value i, Value first, Value hLo,
    Value hHi, Type ct) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> probs;
  for (int64_t k = 0; k < group; ++k)
    probs.push_back(probsOf(b, k));
  for (int64_t c0 = 0; c0 < dv; c0 += kGroupSumVectors * kLanes) {
    int64_t vectors = std::min(kGroupSumVectors, (dv - c0) / kLanes);
    SmallVector<Value> accs(group * vectors, zeroVec);
    for (const ValueRun &run : runs) {
      Type elem = cast<MemRefType>(run.vBuf.getType()).getElementType();
      auto loop = scf::ForOp::create(
          b, run.tBegin, run.tEnd, constIndex(b, 1), accs,
          implicitLoc([&](ImplicitLocOpBuilder &b, Value t, ValueRange iter) {
            SmallVector<Value> row = run.rowOf(b, t), vv;
            for (int64_t v = 0; v < vectors; ++v) {
              SmallVector<Value> idx(row);
              idx.push_back(constIndex(b, c0 + v * kLanes));
              vv.push_back(toF32(
                  b, vector::LoadOp::create(b, VectorType::get({kLanes}, elem),
                                            run.vBuf, idx)));
            }
            SmallVector<Value> next;
            for (int64_t k = 0; k < group; ++k) {
              Value pv = vector::BroadcastOp::create(
                  b, vecF32,
                  memref::LoadOp::create(b, probs[k], ValueRange{t}));
              for (int64_t v = 0; v < vectors; ++v)
                next.push_back(
                    vector::FMAOp::create(b, pv, vv[v], iter[k * vectors + v]));
            }
            scf::YieldOp::create(b, next);
          }));
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    for (int64_t k = 0; k < group; ++k) {
      Value h = arith::AddIOp::create(b, first, constIndex(b, k));
      Value atLeast =
          arith::CmpIOp::create(b, arith::CmpIPredicate::uge, h, hLo);
      Value below = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, h, hHi);
      Value inRange = arith::AndIOp::create(b, atLeast, below);
      auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (int64_t v = 0; v < vectors; ++v) {
        Value y = roundTo(b, accs[k * vectors + v], ct);
        vector::StoreOp::create(
            b, y, out, ValueRange{i, h, constIndex(b, c0 + v * kLanes)});
      }
    }
  }
}
