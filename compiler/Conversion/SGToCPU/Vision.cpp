//===- Vision.cpp - the vision towers' norms, embeddings and pooling ------===//
//
// Part of sgc. The ops of the vision towers besides their linears and their
// attention: LayerNorm, the pixel rescale, the 2-D RoPE, the position
// embeddings, both poolings and the standardization. Each computes in f32
// and rounds where its description in SGOps.td says; none of them is a hot
// loop next to the tower's GEMMs and attention, so they are plain loop nests.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

static Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// init + Σ_{lb <= k < ub} term(k) in f32, one accumulator, in order.
static Value emitSum(OpBuilder &b, Location loc, Value lb, Value ub,
                     llvm::function_ref<Value(OpBuilder &, Location, Value)> term,
                     Value init = {}) {
  if (!init)
    init = constF32(b, loc, 0.0f);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, constIndex(b, loc, 1), ValueRange{init},
      [&](OpBuilder &b, Location loc, Value k, ValueRange acc) {
        scf::YieldOp::create(
            b, loc, Value(arith::AddFOp::create(b, loc, acc[0], term(b, loc, k))));
      });
  return loop.getResult(0);
}

/// positions[n][axis] as an index value (may be negative: padding).
static Value loadPosition(OpBuilder &b, Location loc, Value positions, Value n,
                          int64_t axis) {
  Value p = memref::LoadOp::create(b, loc, positions,
                                   ValueRange{n, constIndex(b, loc, axis)});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), p);
}

//===----------------------------------------------------------------------===//
// LayerNorm, affine, standardize
//===----------------------------------------------------------------------===//

/// Per row: μ = Σx/D, σ² = Σ(x−μ)²/D, then round((x−μ)·rsqrt(σ²+eps)·w + b).
static LogicalResult lowerLayerNorm(sg::LayerNormOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX());
  if (cast<MemRefType>(x.getType()).getRank() != 2)
    return op.emitError("convert-sg-to-cpu: sg.layer_norm needs a "
                        "[tokens, D] input");
  Value w = state.lookup(op.getWeight()), bias = state.lookup(op.getBias());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  int64_t width = cast<MemRefType>(x.getType()).getDimSize(1);
  Value zero = constIndex(b, loc, 0), widthIdx = constIndex(b, loc, width);
  Value widthF = constF32(b, loc, static_cast<float>(width));
  Value eps = constF32(b, loc, static_cast<float>(op.getEps().convertToDouble()));
  emitFor(b, loc, zero, dimOf(b, loc, x, 0), [&](OpBuilder &b, Location loc, Value s) {
    auto load = [&](OpBuilder &b, Location loc, Value k) {
      return toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{s, k}));
    };
    Value mean = arith::DivFOp::create(b, loc, emitSum(b, loc, zero, widthIdx, load),
                                       widthF);
    Value sq = emitSum(b, loc, zero, widthIdx, [&](OpBuilder &b, Location loc, Value k) {
      Value c = arith::SubFOp::create(b, loc, load(b, loc, k), mean);
      return Value(arith::MulFOp::create(b, loc, c, c));
    });
    Value var = arith::DivFOp::create(b, loc, sq, widthF);
    Value r = math::RsqrtOp::create(b, loc,
                                    Value(arith::AddFOp::create(b, loc, var, eps)));
    emitFor(b, loc, zero, widthIdx, [&](OpBuilder &b, Location loc, Value k) {
      Value c = arith::SubFOp::create(b, loc, load(b, loc, k), mean);
      Value n = arith::MulFOp::create(b, loc, c, r);
      Value wk = toF32(b, loc, memref::LoadOp::create(b, loc, w, ValueRange{k}));
      Value bk = toF32(b, loc, memref::LoadOp::create(b, loc, bias, ValueRange{k}));
      Value y = arith::AddFOp::create(
          b, loc, Value(arith::MulFOp::create(b, loc, n, wk)), bk);
      memref::StoreOp::create(b, loc, roundTo(b, loc, y, ct), out, ValueRange{s, k});
    });
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

static LogicalResult lowerAffine(sg::AffineOp op, FunctionLowering &state) {
  Location loc = op.getLoc();
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  float scale = static_cast<float>(op.getScale().convertToDouble());
  float shift = static_cast<float>(op.getShift().convertToDouble());
  emitElementwise(state.b, loc, state.lookup(op.getX()), out,
                  [&](OpBuilder &b, Location loc, ValueRange v) {
                    Value y = arith::MulFOp::create(b, loc, toF32(b, loc, v[0]),
                                                    constF32(b, loc, scale));
                    y = arith::AddFOp::create(b, loc, y, constF32(b, loc, shift));
                    return roundTo(b, loc, y, ct);
                  });
  state.buffers.map(op.getResult(), out);
  return success();
}

/// round((f32(x)·pre − f32(bias[d]))·f32(scale[d])), the channel vectors
/// broadcast along the rows.
static LogicalResult lowerStandardize(sg::StandardizeOp op,
                                      FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  unsigned rank = cast<MemRefType>(x.getType()).getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap channel = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1), ctx);
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {full};
  bool affine = static_cast<bool>(op.getBias());
  if (affine) {
    inputs.append({state.lookup(op.getBias()), state.lookup(op.getScale())});
    maps.append({channel, channel});
  }
  maps.push_back(full);
  Value pre = constF32(b, loc, static_cast<float>(op.getPreScale().convertToDouble()));
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, inputs, ValueRange{out}, maps, parallel,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value y = arith::MulFOp::create(b, loc, toF32(b, loc, args[0]), pre);
        if (affine) {
          y = arith::SubFOp::create(b, loc, y, toF32(b, loc, args[1]));
          y = arith::MulFOp::create(b, loc, y, toF32(b, loc, args[2]));
        }
        linalg::YieldOp::create(b, loc, roundTo(b, loc, y, ct));
      });
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Axial RoPE, position embeddings
//===----------------------------------------------------------------------===//

/// Half a (0: channels [0, D/2), by column; 1: [D/2, D), by row) rotated as
/// sg.rope rotates a head of width D/2.
static LogicalResult lowerAxialRope(sg::AxialRopeOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX()), positions = state.lookup(op.getPositions());
  Value out = state.bufferFor(loc, op.getResult());
  auto type = cast<MemRefType>(x.getType());
  Type ct = type.getElementType();
  int64_t d = type.getDimSize(2), quarter = d / 4;
  Value table = getInvFreqTable(
      state, loc,
      inverseFrequencies(quarter, quarter, d / 2, op.getTheta().convertToDouble(), 1.0));
  Value zero = constIndex(b, loc, 0), quarterIdx = constIndex(b, loc, quarter);
  emitFor(b, loc, zero, dimOf(b, loc, x, 0), [&](OpBuilder &b, Location loc, Value s) {
    for (int64_t axis = 0; axis < 2; ++axis) {
      Value p = memref::LoadOp::create(b, loc, positions,
                                       ValueRange{s, constIndex(b, loc, axis)});
      Value pf = arith::SIToFPOp::create(b, loc, b.getF32Type(), p);
      Value base = constIndex(b, loc, axis * d / 2);
      emitFor(b, loc, zero, quarterIdx, [&](OpBuilder &b, Location loc, Value j) {
        auto [c, sn] = emitRopeCosSin(b, loc, pf, table, j, ct);
        Value k = arith::AddIOp::create(b, loc, base, j);
        Value k2 = arith::AddIOp::create(b, loc, k, quarterIdx);
        emitFor(b, loc, zero, dimOf(b, loc, x, 1), [&](OpBuilder &b, Location loc, Value h) {
          Value lo = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{s, h, k}));
          Value hi = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{s, h, k2}));
          auto [yLo, yHi] = emitRotatePair(b, loc, lo, hi, c, sn, ct);
          memref::StoreOp::create(b, loc, yLo, out, ValueRange{s, h, k});
          memref::StoreOp::create(b, loc, yHi, out, ValueRange{s, h, k2});
        });
      });
    }
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

static LogicalResult lowerAddPositionEmbedding(sg::AddPositionEmbeddingOp op,
                                               FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX()), table = state.lookup(op.getTable());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  if (!op.getPositions()) {
    emitElementwise(b, loc, ValueRange{x, table}, out,
                    [&](OpBuilder &b, Location loc, ValueRange v) {
                      Value y = arith::AddFOp::create(b, loc, toF32(b, loc, v[0]),
                                                      toF32(b, loc, v[1]));
                      return roundTo(b, loc, y, ct);
                    });
    state.buffers.map(op.getResult(), out);
    return success();
  }
  Value positions = state.lookup(op.getPositions());
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value rows = dimOf(b, loc, table, 1);
  emitFor(b, loc, zero, dimOf(b, loc, x, 0), [&](OpBuilder &b, Location loc, Value n) {
    Value px = loadPosition(b, loc, positions, n, 0);
    Value py = loadPosition(b, loc, positions, n, 1);
    auto inRange = [&](Value p) {
      Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, p, zero);
      Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, p, rows);
      return Value(arith::AndIOp::create(b, loc, ge, lt));
    };
    Value valid = arith::AndIOp::create(b, loc, inRange(px), inRange(py));
    // Padding reads row 0 (never out of bounds) and adds 0.
    px = arith::SelectOp::create(b, loc, valid, px, zero);
    py = arith::SelectOp::create(b, loc, valid, py, zero);
    emitFor(b, loc, zero, dimOf(b, loc, x, 1), [&](OpBuilder &b, Location loc, Value k) {
      Value tx = toF32(b, loc, memref::LoadOp::create(b, loc, table, ValueRange{zero, px, k}));
      Value ty = toF32(b, loc, memref::LoadOp::create(b, loc, table, ValueRange{one, py, k}));
      Value pos = toF32(b, loc, roundTo(b, loc, arith::AddFOp::create(b, loc, tx, ty), ct));
      pos = arith::SelectOp::create(b, loc, valid, pos, constF32(b, loc, 0.0f));
      Value xv = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{n, k}));
      Value y = arith::AddFOp::create(b, loc, xv, pos);
      memref::StoreOp::create(b, loc, roundTo(b, loc, y, ct), out, ValueRange{n, k});
    });
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static LogicalResult lowerAvgPool2D(sg::AvgPool2DOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  auto type = cast<MemRefType>(x.getType());
  int64_t k = op.getKernel();
  int64_t g = std::llround(std::sqrt(static_cast<double>(type.getDimSize(0))));
  int64_t m = g / k;
  Value zero = constIndex(b, loc, 0), kIdx = constIndex(b, loc, k);
  Value gIdx = constIndex(b, loc, g), mIdx = constIndex(b, loc, m);
  Value area = constF32(b, loc, static_cast<float>(k * k));
  emitFor(b, loc, zero, constIndex(b, loc, m * m), [&](OpBuilder &b, Location loc, Value t) {
    Value r0 = arith::MulIOp::create(
        b, loc, Value(arith::DivUIOp::create(b, loc, t, mIdx)), kIdx);
    Value c0 = arith::MulIOp::create(
        b, loc, Value(arith::RemUIOp::create(b, loc, t, mIdx)), kIdx);
    emitFor(b, loc, zero, constIndex(b, loc, type.getDimSize(1)),
            [&](OpBuilder &b, Location loc, Value dd) {
              // One accumulator over (ky, kx) in order, as the reference's
              // pooling loop adds.
              auto rows = scf::ForOp::create(
                  b, loc, zero, kIdx, constIndex(b, loc, 1),
                  ValueRange{constF32(b, loc, 0.0f)},
                  [&](OpBuilder &b, Location loc, Value ky, ValueRange acc) {
                    Value row = arith::MulIOp::create(
                        b, loc, Value(arith::AddIOp::create(b, loc, r0, ky)), gIdx);
                    Value next = emitSum(
                        b, loc, zero, kIdx,
                        [&](OpBuilder &b, Location loc, Value kx) {
                          Value patch = arith::AddIOp::create(
                              b, loc, row, Value(arith::AddIOp::create(b, loc, c0, kx)));
                          return toF32(b, loc, memref::LoadOp::create(
                                                   b, loc, x, ValueRange{patch, dd}));
                        },
                        acc[0]);
                    scf::YieldOp::create(b, loc, next);
                  });
              Value sum = rows.getResult(0);
              Value mean = arith::DivFOp::create(b, loc, sum, area);
              memref::StoreOp::create(b, loc, roundTo(b, loc, mean, ct), out,
                                      ValueRange{t, dd});
            });
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

/// An f32 accumulator per bin, patches added in order as x·(1/k²), then one
/// rounding: the reference's one-hot matmul.
static LogicalResult lowerPositionPool(sg::PositionPoolOp op,
                                       FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX()), positions = state.lookup(op.getPositions());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  auto outType = cast<MemRefType>(out.getType());
  int64_t k = op.getKernel(), bins = outType.getDimSize(0);
  int64_t width = outType.getDimSize(1);
  Value zero = constIndex(b, loc, 0), kIdx = constIndex(b, loc, k);
  Value binsIdx = constIndex(b, loc, bins), widthIdx = constIndex(b, loc, width);
  Value patches = dimOf(b, loc, x, 0);
  // Wp = the largest valid column + 1.
  auto maxLoop = scf::ForOp::create(
      b, loc, zero, patches, constIndex(b, loc, 1), ValueRange{zero},
      [&](OpBuilder &b, Location loc, Value n, ValueRange acc) {
        Value px = loadPosition(b, loc, positions, n, 0);
        Value next = arith::AddIOp::create(b, loc, px, constIndex(b, loc, 1));
        scf::YieldOp::create(b, loc, Value(arith::MaxSIOp::create(b, loc, acc[0], next)));
      });
  Value stride = arith::DivUIOp::create(b, loc, maxLoop.getResult(0), kIdx);
  Value acc = state.allocTemp(loc, {bins, width}, b.getF32Type());
  linalg::FillOp::create(b, loc, constF32(b, loc, 0.0f), acc);
  Value weight = constF32(b, loc, 1.0f / static_cast<float>(k * k));
  emitFor(b, loc, zero, patches, [&](OpBuilder &b, Location loc, Value n) {
    Value px = loadPosition(b, loc, positions, n, 0);
    Value py = loadPosition(b, loc, positions, n, 1);
    // One statement per op: C++ leaves the order of nested argument
    // evaluation open (gcc and clang differ), and the IR must not depend on
    // the compiler that built sgc.
    Value binRow = arith::DivSIOp::create(b, loc, py, kIdx);
    Value rowOffset = arith::MulIOp::create(b, loc, stride, binRow);
    Value binCol = arith::DivSIOp::create(b, loc, px, kIdx);
    Value bin = arith::AddIOp::create(b, loc, binCol, rowOffset);
    Value valid = arith::AndIOp::create(
        b, loc,
        Value(arith::AndIOp::create(
            b, loc,
            Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, px, zero)),
            Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, py, zero)))),
        Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bin, binsIdx)));
    auto ifOp = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitFor(b, loc, zero, widthIdx, [&](OpBuilder &b, Location loc, Value dd) {
      Value v = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{n, dd}));
      Value a = memref::LoadOp::create(b, loc, acc, ValueRange{bin, dd});
      Value sum = arith::AddFOp::create(
          b, loc, a, Value(arith::MulFOp::create(b, loc, v, weight)));
      memref::StoreOp::create(b, loc, sum, acc, ValueRange{bin, dd});
    });
  });
  emitElementwise(b, loc, acc, out, [&](OpBuilder &b, Location loc, ValueRange v) {
    return roundTo(b, loc, v[0], ct);
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

/// Image rows (blocks[i] >= 0) take round(embeds[i]), text rows keep x[i].
static LogicalResult lowerMergeImageRows(sg::MergeImageRowsOp op,
                                         FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  MLIRContext *ctx = b.getContext();
  AffineMap full = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0), ctx);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc,
      ValueRange{state.lookup(op.getX()), state.lookup(op.getEmbeds()),
                 state.lookup(op.getBlocks())},
      ValueRange{out}, ArrayRef<AffineMap>{full, full, row, full}, parallel,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
        Value image = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                            args[2], zero);
        // The select is on f32 (a text row's value round-trips exactly): an
        // x86 select of bf16 is promoted to f32 and rounded back by a
        // __truncsfbf2 call, which no model links.
        Value y = arith::SelectOp::create(b, loc, image, toF32(b, loc, args[1]),
                                          toF32(b, loc, args[0]));
        linalg::YieldOp::create(b, loc, roundTo(b, loc, y, ct));
      });
  state.buffers.map(op.getResult(), out);
  return success();
}

ArrayRef<OpLowering> lowering::visionLowerings() {
  static const OpLowering table[] = {
      loweringOf<sg::MergeImageRowsOp, lowerMergeImageRows>(),
      loweringOf<sg::LayerNormOp, lowerLayerNorm>(),
      loweringOf<sg::AffineOp, lowerAffine>(),
      loweringOf<sg::StandardizeOp, lowerStandardize>(),
      loweringOf<sg::AxialRopeOp, lowerAxialRope>(),
      loweringOf<sg::AddPositionEmbeddingOp, lowerAddPositionEmbedding>(),
      loweringOf<sg::AvgPool2DOp, lowerAvgPool2D>(),
      loweringOf<sg::PositionPoolOp, lowerPositionPool>()};
  return table;
}
