//===- GemvRows.cpp - projections: one warp per output row ---------------===//
//
// Part of sgc. `gemv_rows` (CUDA.md §1.2) serves sg.linear, sg.norm_linear
// (several weights, concatenated rows) and sg.gated_mlp, one token per
// grid row (blockIdx.y). Each block first puts its token's input row into
// shared memory (dynamic shared memory for rows over the static 48 KiB: f32
// activations of the seeds' wide inputs), normalized when the op fuses the
// RMSNorm (the prologue:
// every block recomputes the small row's norm instead of a grid-wide
// reduction); then each warp takes a run of output rows (one, or as many
// as keep the grid within one wave of the blocks an SM holds: gemvGrid):
// 128-bit loads of the
// weight row, f32 products, a warp-shuffle sum, and the epilogue (the
// softcap of the LM head; GELU(gate) x up of the MLP in the reference's
// rounding order, gate and up rows in the same warp). The decode LM head
// ends with the row's argmax (Argmax.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

namespace {
/// Tuning knobs (recorded in the spec).
constexpr int64_t kWarps = 4;
/// bf16/f32 elements per lane per load: 16 bytes of bf16.
constexpr int64_t kVector = 8;
/// The most registers a gemv_rows thread may take (seed-kernels.test's
/// budget; ptxas reports 34-61 for the seeds' kernels).
constexpr int64_t kRegisterBudget = 64;

/// A gemv_rows grid: blocks (of one token), each warp's run of rows.
struct GemvGrid {
  int64_t blocks, rowsPerWarp;
};

/// The grid of a gemv_rows launch of `totalRows` output rows whose block
/// has `sharedBytes` of shared memory (static and dynamic) on `chip`. The
/// rule: an SM holds R blocks of kWarps warps at once, R = min(registers /
/// (64 x 128) at the register budget, the SM's shared memory / (sharedBytes
/// + what the driver keeps a block, in its units)); each warp takes
/// ceil(totalRows / (kWarps x SMs x R)) rows, so the grid is at most one
/// wave of SMs x R blocks (an H200: 132 SMs, R = 8 by registers, 65,536 /
/// (64 x 128)). Every block is resident
/// from the start, none runs alone in a small last wave (the fixed 8 blocks
/// an SM before: 960 blocks of Gemma 3's down projection, which holds 7 an
/// SM, ran 1.04 waves), and each block's prologue (the input row, its norm)
/// is paid by as few blocks as fill the GPU.
GemvGrid gemvGrid(int64_t totalRows, int64_t sharedBytes,
                  const CudaChip &chip) {
  int64_t byRegisters =
      chip.registersPerSM / (kRegisterBudget * kWarps * kWarp);
  int64_t perBlock = sharedBytes + chip.sharedReservedPerBlock;
  perBlock = (perBlock + chip.sharedUnit - 1) / chip.sharedUnit *
             chip.sharedUnit;
  int64_t residency = std::max<int64_t>(
      1, std::min(byRegisters, chip.sharedPerSM / perBlock));
  int64_t wave = kWarps * chip.sms * residency;
  int64_t rowsPerWarp = std::max<int64_t>(1, (totalRows + wave - 1) / wave);
  int64_t rowsPerBlock = kWarps * rowsPerWarp;
  return {(totalRows + rowsPerBlock - 1) / rowsPerBlock, rowsPerWarp};
}

/// sum_k f32(w[row, k]) * f32(xs[k]) over the lanes of a warp (each lane
/// takes every 32nd chunk of kVector elements), in every lane; the weights
/// as activations of type `ct` read them.
Value emitWarpDot(KernelBody &k, Value w, Value row, Value xs, int64_t width,
                  Value lane, Type ct) {
  ImplicitLocOpBuilder &b = k.b;
  Location loc = k.loc;
  Type wType = cast<MemRefType>(w.getType()).getElementType();
  Type xType = cast<MemRefType>(xs.getType()).getElementType();
  Value partial;
  if (width % kVector == 0) {
    auto vecF32 = VectorType::get({kVector}, b.getF32Type());
    Value zero = arith::ConstantOp::create(
        b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
    Value start = k.index(IndexExpr(lane) * kVector);
    Value end = k.index(width);
    Value step = k.index(kVector * kWarp);
    auto loop = scf::ForOp::create(
        b, start, end, step, ValueRange{zero},
        [&](OpBuilder &, Location, Value c, ValueRange acc) {
          // 16-byte aligned (CUDA.md §3.1): rows are multiples of kVector.
          auto wv = vector::LoadOp::create(b, VectorType::get({kVector}, wType),
                                           w, ValueRange{row, c});
          wv.setAlignment(16);
          auto xv = vector::LoadOp::create(b, VectorType::get({kVector}, xType),
                                           xs, ValueRange{c});
          xv.setAlignment(16);
          // Operands built one statement each: the IR's op order must not
          // depend on the host compiler's argument evaluation order.
          Value x = toF32(b, xv);
          Value w = lowering::widenWeight(b, wv, ct);
          Value sum = vector::FMAOp::create(b, w, x, acc[0]);
          scf::YieldOp::create(b, sum);
        });
    partial = vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                          loop.getResult(0));
  } else {
    Value end = k.index(width);
    Value step = k.index(kWarp);
    Value zero = k.f32(0.0f);
    auto loop = scf::ForOp::create(
        b, lane, end, step, ValueRange{zero},
        [&](OpBuilder &, Location, Value c, ValueRange acc) {
          Value wv = memref::LoadOp::create(b, w, ValueRange{row, c});
          Value xv = memref::LoadOp::create(b, xs, ValueRange{c});
          Value x = toF32(b, xv);
          Value w = lowering::widenWeight(b, wv, ct);
          Value sum = math::FmaOp::create(b, w, x, acc[0]);
          scf::YieldOp::create(b, sum);
        });
    partial = loop.getResult(0);
  }
  return k.warpSum(partial);
}
} // namespace

FailureOr<KernelUse> gpu_kernels::emitGemvRows(Operation *op,
                                               EmitContext &ctx,
                                               const RowChain *prologue,
                                               bool lmHead) {
  FailureOr<Projection> matched = matchProjection(op);
  if (failed(matched))
    return op->emitError("convert-sg-to-gpu: not a projection");
  Projection g = *matched;
  // The LM head: a token's argmax, or a chunk's wanted rows only.
  bool argmax = lmHead && ctx.oneToken();
  g.wantedRowsOnly = lmHead && !ctx.oneToken();
  using Epilogue = Projection::Epilogue;
  KernelModule &km = ctx.kernels;
  auto xType = km.paramType(g.x, ctx.maxTokens);
  if (xType.getRank() != 2)
    return op->emitError("convert-sg-to-gpu: projections need a [tokens, in] "
                         "input, got rank ")
           << xType.getRank();
  int64_t width = xType.getDimSize(1);
  Type ct = xType.getElementType();
  int64_t elementBytes = ct.getIntOrFloatBitWidth() / 8;
  // The block keeps the input row in shared memory: static up to the 48 KiB
  // a block gets without the opt-in (with the 16 bytes of the reduction's
  // scratch), dynamic above (f32 rows of the seeds' down projections: 60 and
  // 84 KiB), so both dtypes read the same row with the same sums.
  int64_t rowBytes = width * elementBytes;
  int64_t scratchBytes = 16;
  bool dynamicRow = rowBytes + scratchBytes > ctx.chip.staticSharedLimit;
  if (rowBytes + scratchBytes > ctx.chip.blockSharedLimit)
    return op->emitError("convert-sg-to-gpu: an input row of ")
           << rowBytes << " bytes does not fit a gemv_rows block's shared "
           << "memory (" << ctx.chip.blockSharedLimit << " with the opt-in)";

  // The chain computes the input row (in this body, or at the end of the
  // step before, whose output is this step's input).
  if (prologue && prologue->result.getType() != g.x.getType())
    return op->emitError("convert-sg-to-gpu: the prologue's chain does not "
                         "compute this projection's input");
  SmallVector<Type> params = {xType};
  SmallVector<Value> ins = {g.x};
  if (prologue) {
    params.clear();
    ins.assign(prologue->ins.begin(), prologue->ins.end());
    for (Value v : ins)
      params.push_back(km.paramType(v, ctx.maxTokens));
  }
  int64_t numInputs = static_cast<int64_t>(ins.size());
  if (g.normWeight) {
    params.push_back(km.paramType(g.normWeight, ctx.maxTokens));
    ins.push_back(g.normWeight);
  }
  SmallVector<int64_t> rows;
  for (Value w : g.weights) {
    params.push_back(km.paramType(w, ctx.maxTokens));
    ins.push_back(w);
    rows.push_back(cast<ShapedType>(w.getType()).getDimSize(0));
  }
  for (Value r : op->getResults())
    params.push_back(km.paramType(r, ctx.maxTokens));
  if (prologue)
    params.push_back(xType);
  int64_t totalRows = g.totalRows();
  if (argmax && (g.weights.size() != 1 || g.gated()))
    return op->emitError("convert-sg-to-gpu: the argmax epilogue needs a "
                         "projection of one weight");

  Builder a(op->getContext());
  SmallVector<NamedAttribute> specAttrs = g.specAttrs(a);
  specAttrs.push_back(a.getNamedAttr("warps", a.getI64IntegerAttr(kWarps)));
  specAttrs.push_back(a.getNamedAttr("vector", a.getI64IntegerAttr(kVector)));
  // Enough blocks to fill the GPU once, no more: every block recomputes
  // the input row's prologue (the norm, a fused chain), which a run of rows
  // per warp amortizes (the LM head: 63 rows a warp instead of 65,552
  // blocks). The row's shared memory decides how many blocks fill it. (The
  // argmax's few bytes of flags aside: they never decide.)
  GemvGrid grid = gemvGrid(totalRows, rowBytes + scratchBytes, ctx.chip);
  int64_t blocks = grid.blocks, rowsPerWarp = grid.rowsPerWarp;
  specAttrs.push_back(
      a.getNamedAttr("rows_per_warp", a.getI64IntegerAttr(rowsPerWarp)));
  if (prologue)
    specAttrs.push_back(a.getNamedAttr("prologue", prologue->steps(a)));
  int64_t threads = kWarps * kWarp;
  int64_t rowsPerBlock = kWarps * rowsPerWarp;
  // The argmax's partials (values, ids), its counter and the token.
  MLIRContext *mctx = op->getContext();
  auto i32 = IntegerType::get(mctx, 32);
  SmallVector<MemRefType> argmaxScratch = {
      MemRefType::get({blocks}, Float32Type::get(mctx)),
      MemRefType::get({blocks}, i32)};
  auto oneI32 = MemRefType::get({1}, i32);
  if (argmax) {
    specAttrs.push_back(a.getNamedAttr("argmax", a.getBoolAttr(true)));
    llvm::append_range(params, argmaxScratch);
    params.append({oneI32, oneI32});
  }

  KernelUse use;
  use.kernel = km.getOrCreate(
      "gemv_rows", a.getDictionaryAttr(specAttrs), params, {threads, 1, 1},
      ctx.oneToken(), [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Location loc = k.loc;
        unsigned p = 0;
        ArrayRef<Value> inputs = ArrayRef<Value>(k.params).take_front(numInputs);
        Value x = inputs.front();
        p += numInputs;
        Value normWeight = g.normWeight ? k.params[p++] : Value();
        SmallVector<Value> weights, outs;
        for (size_t i = 0; i < g.weights.size(); ++i) {
          k.markReadOnly(p);
          weights.push_back(k.params[p++]);
        }
        for (size_t i = 0; i < op->getNumResults(); ++i)
          outs.push_back(k.params[p++]);
        Value chainOut = prologue ? k.params[p++] : Value();
        ArgmaxBuffers best;
        if (argmax)
          best = {outs[0], k.params[p], k.params[p + 1], k.params[p + 2],
                  k.params[p + 3]};
        Value xs = dynamicRow ? k.dynamicSharedBuffer({width}, ct)
                              : k.sharedBuffer({width}, ct);
        Value scratch = k.sharedBuffer({kWarps}, b.getF32Type());
        Value t = k.blockId(gpu::Dimension::y);
        Value tid = k.threadId(gpu::Dimension::x);
        Value live = k.lessThan(t, k.numTokens);
        if (g.wantedRowsOnly)
          live = arith::AndIOp::create(b, live, k.rowsWanted(t, 1));
        k.ifThen(live, [&] {
          // Prologue: the token's row into shared memory, in chunks of 8
          // columns a thread (16-byte loads: KernelBody::forRowChunks).
          // With a chain in front, the block computes that row itself (the
          // first block also stores it: later launches read it); else one
          // pass copies it, summing the squares of a norm on the way. Each
          // thread then normalizes the chunks it wrote: no barrier needed.
          int64_t n = KernelBody::rowChunk(width);
          auto rowChunk = [&](Value c) {
            return k.loadChunk(xs, ValueRange{}, c, n);
          };
          Value sum;
          if (prologue) {
            Value block = k.blockId(gpu::Dimension::x);
            Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                block, k.index(0));
            emitRowChainRow(k, *prologue, inputs, t, threads, scratch,
                            [&](Value c, Value v) {
                              k.storeChunk(v, xs, ValueRange{}, c);
                              k.ifThen(first, [&] {
                                k.storeChunk(v, chainOut, ValueRange{t}, c);
                              });
                            });
            if (g.norm)
              sum = k.rowSumOfSquares(width, n, threads, rowChunk);
          } else {
            auto copy = [&](Value c) {
              Value v = k.loadChunk(x, ValueRange{t}, c, n);
              k.storeChunk(v, xs, ValueRange{}, c);
              return v;
            };
            if (g.norm)
              sum = k.rowSumOfSquares(width, n, threads, copy);
            else
              k.forRowChunks(width, n, threads, [&](Value c) { copy(c); });
          }
          if (g.norm) {
            Value r =
                k.rmsScale(k.blockSum(sum, threads, scratch), width, g.eps);
            k.forRowChunks(width, n, threads, [&](Value c) {
              Value w = normWeight
                            ? k.loadChunk(normWeight, ValueRange{}, c, n)
                            : Value();
              k.storeChunk(lowering::emitNormalize(b, rowChunk(c), r, w,
                                                   g.normOffset == 1, ct),
                           xs, ValueRange{}, c);
            });
          }
          gpu::BarrierOp::create(b);

          // Each warp its run of rowsPerWarp consecutive output rows.
          Value warp = k.index(IndexExpr(tid) / kWarp);
          Value lane = k.index(IndexExpr(tid) % kWarp);
          IndexExpr block(k.blockId(gpu::Dimension::x));
          Value firstRow = k.index((block * kWarps + warp) * rowsPerWarp);
          Value lane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane,
                                              k.index(0));
          Type yType = cast<MemRefType>(outs.front().getType()).getElementType();
          Value lastRow = k.index(IndexExpr(firstRow) + rowsPerWarp);
          // The warp's rows of [lo, hi), one at a time.
          auto forRows = [&](int64_t lo, int64_t hi,
                             llvm::function_ref<void(Value)> body) {
            Value start = arith::MaxUIOp::create(b, firstRow, k.index(lo));
            Value stop = arith::MinUIOp::create(b, lastRow, k.index(hi));
            k.forRange(start, stop, k.index(1), body);
          };
          if (g.epilogue == Epilogue::GatedGelu) {
            forRows(0, totalRows, [&](Value row) {
              Value gate = emitWarpDot(k, weights[0], row, xs, width, lane, yType);
              Value up = emitWarpDot(k, weights[1], row, xs, width, lane, yType);
              k.ifThen(lane0, [&] {
                memref::StoreOp::create(
                    b, emitProjectionEpilogue(b, g, gate, up, yType), outs[0],
                    ValueRange{t, row});
              });
            });
            return;
          }
          // Concatenated rows: weight i owns [offset_i, offset_i + rows_i).
          int64_t offset = 0;
          for (auto [i, n] : llvm::enumerate(rows)) {
            forRows(offset, offset + n, [&](Value row) {
              Value local = k.index(IndexExpr(row) - offset);
              Value dot = emitWarpDot(k, weights[i], local, xs, width,
                                      lane, yType);
              k.ifThen(lane0, [&] {
                memref::StoreOp::create(
                    b, emitProjectionEpilogue(b, g, dot, Value(), yType),
                    outs[i], ValueRange{t, local});
              });
            });
            offset += n;
          }
          if (argmax) {
            Value begin = k.index(block * rowsPerBlock);
            Value blockEnd = k.index(IndexExpr(begin) + rowsPerBlock);
            Value rowsEnd = k.index(totalRows);
            Value end = arith::MinUIOp::create(b, blockEnd, rowsEnd);
            emitArgmaxEpilogue(k, best, t, begin, end, blocks, threads);
          }
        });
      });
  use.ins = ins;
  use.outs.assign(op->getResults().begin(), op->getResults().end());
  if (prologue)
    use.outs.push_back(prologue->result);
  if (argmax) {
    use.scratch = argmaxScratch;
    use.zeroed = {oneI32};
    use.writesArgmax = true;
  }
  use.grid = {blocks, ctx.maxTokens, 1};
  use.tokenGridDim = 1;
  use.block = {threads, 1, 1};
  if (dynamicRow)
    use.dynamicShared = rowBytes;
  return use;
}
