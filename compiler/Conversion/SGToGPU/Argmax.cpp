//===- Argmax.cpp - the LM head's greedy token on the device -------------===//
//
// Part of sgc. The decode LM head (gemv_rows) ends with the argmax of the
// logits row (CUDA.md §1.3), so a greedy decode copies 4 bytes back a token
// instead of the row (1 MiB of f32 at a vocabulary of 262,144). Each block
// takes the best of the rows it has just stored (read back as stored, so
// the device picks what the host would pick from the same row), writes it to
// the partials, and the last block to finish reduces the partials to the
// token. The rule is the host sampler's (runtime/src/sampler.cc): NaN never
// wins, ties go to the lowest id; it is a total order, so the schedule of
// the blocks and lanes does not change the result.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

namespace {
/// A candidate token: its f32 logit and its i32 id.
struct Candidate {
  Value value, id;
};

/// The better of `x` and `y`: `y` when `x` is NaN, or `y` is larger, or
/// equal with a lower id (a NaN `y` is neither, so it never beats a number;
/// of two NaNs either will do: a NaN best becomes id 0 at the end).
Candidate better(ImplicitLocOpBuilder &b, Candidate x, Candidate y) {
  using P = arith::CmpFPredicate;
  auto cmp = [&](P p, Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, p, l, r);
  };
  Value xNaN = cmp(P::UNO, x.value, x.value);
  Value larger = cmp(P::OGT, y.value, x.value);
  // One statement each: argument order would differ between compilers.
  Value lowerId =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, y.id, x.id);
  Value equal = cmp(P::OEQ, y.value, x.value);
  Value lowerTie = arith::AndIOp::create(b, equal, lowerId);
  Value wins = arith::OrIOp::create(
      b, xNaN, arith::OrIOp::create(b, larger, lowerTie).getResult());
  return {arith::SelectOp::create(b, wins, y.value, x.value),
          arith::SelectOp::create(b, wins, y.id, x.id)};
}

/// What a thread without rows holds: loses to every candidate.
Candidate nothing(KernelBody &k) {
  return {k.f32(std::numeric_limits<float>::quiet_NaN()),
          arith::ConstantIntOp::create(k.b, k.b.getI32Type(),
                                       std::numeric_limits<int32_t>::max())};
}

/// The best candidate of [begin, end) strided from `start` by `step`, each
/// from `load(i)`.
Candidate scan(KernelBody &k, Value start, Value end, Value step,
               llvm::function_ref<Candidate(Value)> load) {
  Candidate none = nothing(k);
  auto loop =
      scf::ForOp::create(k.b, start, end, step, ValueRange{none.value, none.id},
                         [&](OpBuilder &, Location, Value i, ValueRange acc) {
                           Candidate c = better(k.b, {acc[0], acc[1]}, load(i));
                           scf::YieldOp::create(k.b, ValueRange{c.value, c.id});
                         });
  return {loop.getResult(0), loop.getResult(1)};
}

/// The block's best candidate, in every thread: a shuffle tree in each
/// warp, then every thread scans the warps' bests. Two barriers.
Candidate blockBest(KernelBody &k, Candidate c, int64_t threads) {
  ImplicitLocOpBuilder &b = k.b;
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    auto shuffle = [&](Value v) -> Value {
      return gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    c = better(b, c, {shuffle(c.value), shuffle(c.id)});
  }
  int64_t warps = threads / kWarp;
  Value values = k.sharedBuffer({warps}, b.getF32Type());
  Value ids = k.sharedBuffer({warps}, b.getI32Type());
  Value tid = k.threadId(gpu::Dimension::x);
  Value warp = k.index(IndexExpr(tid) / kWarp);
  Value lane = k.index(IndexExpr(tid) % kWarp);
  k.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, k.index(0)),
           [&] {
             memref::StoreOp::create(b, c.value, values, ValueRange{warp});
             memref::StoreOp::create(b, c.id, ids, ValueRange{warp});
           });
  gpu::BarrierOp::create(b);
  Value zero = k.index(0), count = k.index(warps), one = k.index(1);
  Candidate best =
      scan(k, zero, count, one, [&](Value w) {
        return Candidate{memref::LoadOp::create(b, values, ValueRange{w}),
                         memref::LoadOp::create(b, ids, ValueRange{w})};
      });
  gpu::BarrierOp::create(b);
  return best;
}
} // namespace

void gpu_kernels::emitArgmaxEpilogue(KernelBody &k, const ArgmaxBuffers &a,
                                     Value t, Value rowBegin, Value rowEnd,
                                     int64_t blocks, int64_t threads) {
  ImplicitLocOpBuilder &b = k.b;
  Value tid = k.threadId(gpu::Dimension::x);
  Value step = k.index(threads);
  Value zero = k.index(0);
  auto toId = [&](Value i) -> Value {
    return arith::IndexCastOp::create(b, b.getI32Type(), i);
  };
  // The block's logits stores are visible to its threads after a barrier.
  gpu::BarrierOp::create(b);
  Value first = k.index(IndexExpr(rowBegin) + tid);
  Candidate mine = scan(k, first, rowEnd, step, [&](Value row) {
    Value v = memref::LoadOp::create(b, a.logits, ValueRange{t, row});
    return Candidate{lowering::toF32(b, v), toId(row)};
  });
  Candidate block = blockBest(k, mine, threads);
  Value bx = k.blockId(gpu::Dimension::x);
  Value tid0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, zero);
  k.ifThen(tid0, [&] {
    memref::StoreOp::create(b, block.value, a.partialValues, ValueRange{bx});
    memref::StoreOp::create(b, block.id, a.partialIds, ValueRange{bx});
  });
  k.ifLastBlock(a.counter, zero, blocks, [&] {
    Candidate part = scan(k, tid, k.index(blocks), step, [&](Value p) {
      return Candidate{
          memref::LoadOp::create(b, a.partialValues, ValueRange{p}),
          memref::LoadOp::create(b, a.partialIds, ValueRange{p})};
    });
    Candidate best = blockBest(k, part, threads);
    k.ifThen(tid0, [&] {
      // A row of NaN only: id 0, as on the host.
      Value allNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO,
                                           best.value, best.value);
      Value id = arith::SelectOp::create(
          b, allNaN, arith::ConstantIntOp::create(b, b.getI32Type(), 0),
          best.id);
      memref::StoreOp::create(b, id, a.token, ValueRange{zero});
    });
  });
}
