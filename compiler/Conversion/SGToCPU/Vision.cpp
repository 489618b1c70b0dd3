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
static Value
emitSum(ImplicitLocOpBuilder &b, Value lb, Value ub,
        llvm::function_ref<Value(ImplicitLocOpBuilder &, Value)> term,
        Value init = {}) {
  if (!init)
    init = constF32(b, 0.0f);
  auto loop = scf::ForOp::create(
      b, lb, ub, constIndex(b, 1), ValueRange{init},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value k, ValueRange acc) {
        scf::YieldOp::create(
            b, Value(arith::AddFOp::create(b, acc[0], term(b, k))));
      }));
  return loop.getResult(0);
}

/// positions[n][axis] as an index value (may be negative: padding).
static Value loadPosition(ImplicitLocOpBuilder &b, Value positions, Value n,
                          int64_t axis) {
  Value p =
      memref::LoadOp::create(b, positions, ValueRange{n, constIndex(b, axis)});
  return arith::IndexCastOp::create(b, b.getIndexType(), p);
}

//===----------------------------------------------------------------------===//
// LayerNorm, affine, standardize
//===----------------------------------------------------------------------===//

/// Per row: μ = Σx/D, σ² = Σ(x−μ)²/D, then round((x−μ)·rsqrt(σ²+eps)·w + b).
static LogicalResult lowerLayerNorm(sg::LayerNormOp op,
                                    FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  if (cast<MemRefType>(x.getType()).getRank() != 2)
    return op.emitError("convert-sg-to-cpu: sg.layer_norm needs a "
                        "[tokens, D] input");
  Value w = state.lookup(op.getWeight()), bias = state.lookup(op.getBias());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  int64_t width = cast<MemRefType>(x.getType()).getDimSize(1);
  Value zero = constIndex(b, 0), widthIdx = constIndex(b, width);
  Value widthF = constF32(b, static_cast<float>(width));
  Value eps = constF32(b, static_cast<float>(op.getEps().convertToDouble()));
  emitFor(b, zero, dimOf(b, x, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    auto load = [&](ImplicitLocOpBuilder &b, Value k) {
      return toF32(b, memref::LoadOp::create(b, x, ValueRange{s, k}));
    };
    Value mean =
        arith::DivFOp::create(b, emitSum(b, zero, widthIdx, load), widthF);
    Value sq =
        emitSum(b, zero, widthIdx, [&](ImplicitLocOpBuilder &b, Value k) {
          Value c = arith::SubFOp::create(b, load(b, k), mean);
          return Value(arith::MulFOp::create(b, c, c));
        });
    Value var = arith::DivFOp::create(b, sq, widthF);
    Value r =
        math::RsqrtOp::create(b, Value(arith::AddFOp::create(b, var, eps)));
    emitFor(b, zero, widthIdx, [&](ImplicitLocOpBuilder &b, Value k) {
      Value c = arith::SubFOp::create(b, load(b, k), mean);
      Value n = arith::MulFOp::create(b, c, r);
      Value wk = toF32(b, memref::LoadOp::create(b, w, ValueRange{k}));
      Value bk = toF32(b, memref::LoadOp::create(b, bias, ValueRange{k}));
      Value y =
          arith::AddFOp::create(b, Value(arith::MulFOp::create(b, n, wk)), bk);
      memref::StoreOp::create(b, roundTo(b, y, ct), out, ValueRange{s, k});
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
  ImplicitLocOpBuilder b(loc, state.b);
  emitElementwise(b, state.lookup(op.getX()), out,
                  [&](ImplicitLocOpBuilder &b, ValueRange v) {
                    Value x = toF32(b, v[0]);
                    Value y = arith::MulFOp::create(b, x, constF32(b, scale));
                    y = arith::AddFOp::create(b, y, constF32(b, shift));
                    return roundTo(b, y, ct);
                  });
  state.buffers.map(op.getResult(), out);
  return success();
}

/// round((f32(x)·pre − f32(bias[d]))·f32(scale[d])), the channel vectors
/// broadcast along the rows.
static LogicalResult lowerStandardize(sg::StandardizeOp op,
                                      FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
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
  Value pre =
      constF32(b, static_cast<float>(op.getPreScale().convertToDouble()));
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, inputs, ValueRange{out}, maps, parallel,
      implicitLoc([&](ImplicitLocOpBuilder &b, ValueRange args) {
        Value y = arith::MulFOp::create(b, toF32(b, args[0]), pre);
        if (affine) {
          y = arith::SubFOp::create(b, y, toF32(b, args[1]));
          y = arith::MulFOp::create(b, y, toF32(b, args[2]));
        }
        linalg::YieldOp::create(b, roundTo(b, y, ct));
      }));
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Axial RoPE, position embeddings
//===----------------------------------------------------------------------===//

/// Half a (0: channels [0, D/2), by column; 1: [D/2, D), by row) rotated as
/// sg.rope rotates a head of width D/2.
static LogicalResult lowerAxialRope(sg::AxialRopeOp op,
                                    FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX()), positions = state.lookup(op.getPositions());
  Value out = state.bufferFor(loc, op.getResult());
  auto type = cast<MemRefType>(x.getType());
  Type ct = type.getElementType();
  int64_t d = type.getDimSize(2), quarter = d / 4;
  Value table = getInvFreqTable(
      state, loc,
      inverseFrequencies(quarter, quarter, d / 2, op.getTheta().convertToDouble(), 1.0));
  Value zero = constIndex(b, 0), quarterIdx = constIndex(b, quarter);
  emitFor(b, zero, dimOf(b, x, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    for (int64_t axis = 0; axis < 2; ++axis) {
      Value p = memref::LoadOp::create(b, positions,
                                       ValueRange{s, constIndex(b, axis)});
      Value pf = arith::SIToFPOp::create(b, b.getF32Type(), p);
      emitFor(b, zero, quarterIdx, [&](ImplicitLocOpBuilder &b, Value j) {
        auto [c, sn] = emitRopeCosSin(b, pf, table, j, ct);
        Value k = (IndexExpr(j) + axis * d / 2).emit(b);
        Value k2 = (IndexExpr(k) + quarter).emit(b);
        emitFor(b, zero, dimOf(b, x, 1), [&](ImplicitLocOpBuilder &b, Value h) {
          Value lo =
              toF32(b, memref::LoadOp::create(b, x, ValueRange{s, h, k}));
          Value hi =
              toF32(b, memref::LoadOp::create(b, x, ValueRange{s, h, k2}));
          auto [yLo, yHi] = emitRotatePair(b, lo, hi, c, sn, ct);
          memref::StoreOp::create(b, yLo, out, ValueRange{s, h, k});
          memref::StoreOp::create(b, yHi, out, ValueRange{s, h, k2});
        });
      });
    }
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

static LogicalResult lowerAddPositionEmbedding(sg::AddPositionEmbeddingOp op,
                                               FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX()), table = state.lookup(op.getTable());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  if (!op.getPositions()) {
    emitElementwise(b, ValueRange{x, table}, out,
                    [&](ImplicitLocOpBuilder &b, ValueRange v) {
                      Value x = toF32(b, v[0]);
                      Value y = arith::AddFOp::create(b, x, toF32(b, v[1]));
                      return roundTo(b, y, ct);
                    });
    state.buffers.map(op.getResult(), out);
    return success();
  }
  Value positions = state.lookup(op.getPositions());
  Value zero = constIndex(b, 0), one = constIndex(b, 1);
  Value rows = dimOf(b, table, 1);
  emitFor(b, zero, dimOf(b, x, 0), [&](ImplicitLocOpBuilder &b, Value n) {
    Value px = loadPosition(b, positions, n, 0);
    Value py = loadPosition(b, positions, n, 1);
    auto inRange = [&](Value p) {
      Value ge = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, p, zero);
      Value lt = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, p, rows);
      return Value(arith::AndIOp::create(b, ge, lt));
    };
    Value xValid = inRange(px);
    Value yValid = inRange(py);
    Value valid = arith::AndIOp::create(b, xValid, yValid);
    // Padding reads row 0 (never out of bounds) and adds 0.
    px = arith::SelectOp::create(b, valid, px, zero);
    py = arith::SelectOp::create(b, valid, py, zero);
    emitFor(b, zero, dimOf(b, x, 1), [&](ImplicitLocOpBuilder &b, Value k) {
      Value tx =
          toF32(b, memref::LoadOp::create(b, table, ValueRange{zero, px, k}));
      Value ty =
          toF32(b, memref::LoadOp::create(b, table, ValueRange{one, py, k}));
      Value pos = toF32(b, roundTo(b, arith::AddFOp::create(b, tx, ty), ct));
      pos = arith::SelectOp::create(b, valid, pos, constF32(b, 0.0f));
      Value xv = toF32(b, memref::LoadOp::create(b, x, ValueRange{n, k}));
      Value y = arith::AddFOp::create(b, xv, pos);
      memref::StoreOp::create(b, roundTo(b, y, ct), out, ValueRange{n, k});
    });
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static LogicalResult lowerAvgPool2D(sg::AvgPool2DOp op,
                                    FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  auto type = cast<MemRefType>(x.getType());
  int64_t k = op.getKernel();
  int64_t g = std::llround(std::sqrt(static_cast<double>(type.getDimSize(0))));
  int64_t m = g / k;
  Value zero = constIndex(b, 0), kIdx = constIndex(b, k);
  Value area = constF32(b, static_cast<float>(k * k));
  emitFor(b, zero, constIndex(b, m * m), [&](ImplicitLocOpBuilder &b, Value t) {
    // Output cell t's window starts at row r0 = t / m · k, column c0.
    IndexExpr cell(t);
    Value r0 = (cell / m * k).emit(b);
    Value c0 = (cell % m * k).emit(b);
    emitFor(b, zero, constIndex(b, type.getDimSize(1)),
            [&](ImplicitLocOpBuilder &b, Value dd) {
              // One accumulator over (ky, kx) in order, as the reference's
              // pooling loop adds.
              Value init = constF32(b, 0.0f);
              auto rows = emitLoop(
                  b, 0, k, 1, ValueRange{init},
                  [&](ImplicitLocOpBuilder &b, Value ky, ValueRange acc) {
                    Value row = ((IndexExpr(r0) + ky) * g).emit(b);
                    Value next = emitSum(
                        b, zero, kIdx,
                        [&](ImplicitLocOpBuilder &b, Value kx) {
                          Value patch = (IndexExpr(row) + c0 + kx).emit(b);
                          return toF32(b, memref::LoadOp::create(
                                              b, x, ValueRange{patch, dd}));
                        },
                        acc[0]);
                    scf::YieldOp::create(b, next);
                  });
              Value sum = rows.getResult(0);
              Value mean = arith::DivFOp::create(b, sum, area);
              memref::StoreOp::create(b, roundTo(b, mean, ct), out,
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
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX()), positions = state.lookup(op.getPositions());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  auto outType = cast<MemRefType>(out.getType());
  int64_t k = op.getKernel(), bins = outType.getDimSize(0);
  int64_t width = outType.getDimSize(1);
  Value zero = constIndex(b, 0), kIdx = constIndex(b, k);
  Value binsIdx = constIndex(b, bins), widthIdx = constIndex(b, width);
  Value patches = dimOf(b, x, 0);
  // Wp = the largest valid column + 1.
  auto maxLoop = scf::ForOp::create(
      b, zero, patches, constIndex(b, 1), ValueRange{zero},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value n, ValueRange acc) {
        Value px = loadPosition(b, positions, n, 0);
        Value next = arith::AddIOp::create(b, px, constIndex(b, 1));
        scf::YieldOp::create(b, Value(arith::MaxSIOp::create(b, acc[0], next)));
      }));
  Value stride = arith::DivUIOp::create(b, maxLoop.getResult(0), kIdx);
  Value acc = state.allocTemp(loc, {bins, width}, b.getF32Type());
  linalg::FillOp::create(b, constF32(b, 0.0f), acc);
  Value weight = constF32(b, 1.0f / static_cast<float>(k * k));
  emitFor(b, zero, patches, [&](ImplicitLocOpBuilder &b, Value n) {
    Value px = loadPosition(b, positions, n, 0);
    Value py = loadPosition(b, positions, n, 1);
    // One statement per op: C++ leaves the order of nested argument
    // evaluation open (gcc and clang differ), and the IR must not depend on
    // the compiler that built sgc.
    Value binRow = arith::DivSIOp::create(b, py, kIdx);
    Value rowOffset = arith::MulIOp::create(b, stride, binRow);
    Value binCol = arith::DivSIOp::create(b, px, kIdx);
    Value bin = arith::AddIOp::create(b, binCol, rowOffset);
    Value pxValid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, px, zero);
    Value pyValid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, py, zero);
    Value binValid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, bin, binsIdx);
    Value valid = arith::AndIOp::create(b, pxValid, pyValid);
    valid = arith::AndIOp::create(b, valid, binValid);
    auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitFor(b, zero, widthIdx, [&](ImplicitLocOpBuilder &b, Value dd) {
      Value v = toF32(b, memref::LoadOp::create(b, x, ValueRange{n, dd}));
      Value a = memref::LoadOp::create(b, acc, ValueRange{bin, dd});
      Value sum = arith::AddFOp::create(
          b, a, Value(arith::MulFOp::create(b, v, weight)));
      memref::StoreOp::create(b, sum, acc, ValueRange{bin, dd});
    });
  });
  emitElementwise(b, acc, out, [&](ImplicitLocOpBuilder &b, ValueRange v) {
    return roundTo(b, v[0], ct);
  });
  state.buffers.map(op.getResult(), out);
  return success();
}

/// Image rows (blocks[i] >= 0) take round(embeds[i]), text rows keep x[i].
static LogicalResult lowerMergeImageRows(sg::MergeImageRowsOp op,
                                         FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  MLIRContext *ctx = b.getContext();
  AffineMap full = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0), ctx);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b,
      ValueRange{state.lookup(op.getX()), state.lookup(op.getEmbeds()),
                 state.lookup(op.getBlocks())},
      ValueRange{out}, ArrayRef<AffineMap>{full, full, row, full}, parallel,
      implicitLoc([&](ImplicitLocOpBuilder &b, ValueRange args) {
        Value zero = arith::ConstantIntOp::create(b, 0, 32);
        Value image =
            arith::CmpIOp::create(b, arith::CmpIPredicate::sge, args[2], zero);
        // The select is on f32 (a text row's value round-trips exactly): an
        // x86 select of bf16 is promoted to f32 and rounded back by a
        // __truncsfbf2 call, which no model links.
        Value imageValue = toF32(b, args[1]);
        Value textValue = toF32(b, args[0]);
        Value y = arith::SelectOp::create(b, image, imageValue, textValue);
        linalg::YieldOp::create(b, roundTo(b, y, ct));
      }));
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
