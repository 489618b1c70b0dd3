//===- Elementwise.cpp - embed, norms, RoPE and elementwise ops -----------===//
//
// Part of sgc. Every op computes in f32 and rounds once to its result type,
// at the points gemma-text.md §10 lists.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/WeightRead.h"
#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

#include <functional>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

static Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// out[s, :] = round(f32(table[ids[s], :]) * scale); a block-encoded table
/// dequantizes the row's elements one by one (one row a token).
static LogicalResult lowerEmbed(sg::EmbedOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value table = state.lookup(op.getTable());
  Value ids = state.lookup(op.getIds());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  Value scale = constF32(b, loc, static_cast<float>(op.getScale().convertToDouble()));
  Value zero = constIndex(b, loc, 0);
  Value hidden = dimOf(b, loc, out, 1);
  Value vocab = dimOf(b, loc, table, 0);
  Type tableType = op.getTable().getType().getElementType();
  emitFor(b, loc, zero, dimOf(b, loc, out, 0),
          [&](OpBuilder &b, Location loc, Value s) {
            Value id = memref::LoadOp::create(b, loc, ids, ValueRange{s});
            Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
            // Ids outside the table read row 0 instead of stray memory; the
            // runtime rejects them before calling.
            Value inRange = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, row, vocab);
            row = arith::SelectOp::create(b, loc, inRange, row, zero);
            emitFor(b, loc, zero, hidden, [&](OpBuilder &b, Location loc, Value h) {
              Value e = loadWeightF32(b, loc, table, tableType, row, h, 1, ct);
              Value y = arith::MulFOp::create(b, loc, e, scale);
              memref::StoreOp::create(b, loc, roundTo(b, loc, y, ct), out,
                                      ValueRange{s, h});
            });
          });
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

/// n = x * rsqrt(mean(x^2) + eps) in f32; result = round(n * (offset + w)),
/// row by row over the last dimension with the helpers the fused norms use
/// (emitRmsScale, emitNormalize), so fused and unfused norms agree bit for
/// bit.
static LogicalResult lowerRMSNorm(sg::RMSNormOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX());
  auto xType = cast<MemRefType>(x.getType());
  int64_t width = xType.getShape().back();
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  double eps = op.getEps().convertToDouble();
  Value weight = op.getWeight() ? state.lookup(op.getWeight()) : Value();
  bool plusOne = op.getWeightOffsetAttr().getInt() == 1;

  // One loop per leading dimension, then the row.
  std::function<void(OpBuilder &, Location, SmallVector<Value>)> rows =
      [&](OpBuilder &b, Location loc, SmallVector<Value> idx) {
        if (idx.size() + 1 < static_cast<size_t>(xType.getRank())) {
          emitFor(b, loc, constIndex(b, loc, 0), dimOf(b, loc, x, idx.size()),
                  [&](OpBuilder &b, Location loc, Value i) {
                    SmallVector<Value> inner(idx);
                    inner.push_back(i);
                    rows(b, loc, inner);
                  });
          return;
        }
        auto load = [&](OpBuilder &b, Location loc, Value col, int64_t lanes) {
          return emitRowLoad(b, loc, x, idx, col, lanes);
        };
        Value r = emitRmsScale(b, loc, width, eps, load);
        emitRowChunks(b, loc, width,
                      [&](OpBuilder &b, Location loc, Value col, int64_t lanes) {
                        Value w = weight ? emitRowLoad(b, loc, weight, ValueRange{},
                                                       col, lanes)
                                         : Value();
                        emitRowStore(b, loc,
                                     emitNormalize(b, loc, load(b, loc, col, lanes),
                                                   r, w, plusOne, ct),
                                     out, idx, col);
                      });
      };
  rows(b, loc, {});
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Head views
//===----------------------------------------------------------------------===//

static LogicalResult lowerSplitHeads(sg::SplitHeadsOp op,
                                     FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value x = state.lookup(op.getX());
  auto resultType = op.getResult().getType();
  auto type = MemRefType::get(resultType.getShape(), resultType.getElementType());
  SmallVector<OpFoldResult> shape = {
      resultType.isDynamicDim(0) ? OpFoldResult(dimOf(b, loc, x, 0))
                                 : OpFoldResult(b.getIndexAttr(resultType.getDimSize(0))),
      b.getIndexAttr(resultType.getDimSize(1)),
      b.getIndexAttr(resultType.getDimSize(2))};
  Value view = memref::ExpandShapeOp::create(
      b, loc, type, x, ArrayRef<ReassociationIndices>{{0}, {1, 2}}, shape);
  state.buffers.map(op.getResult(), view);
  return success();
}

static LogicalResult lowerMergeHeads(sg::MergeHeadsOp op,
                                     FunctionLowering &state) {
  OpBuilder &b = state.b;
  Value x = state.lookup(op.getX());
  Value view = memref::CollapseShapeOp::create(
      b, op.getLoc(), x, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  state.buffers.map(op.getResult(), view);
  return success();
}

//===----------------------------------------------------------------------===//
// Rows of a batched decode step
//===----------------------------------------------------------------------===//

/// The subview of `buffer` at leading index `row`, one row deep.
static Value rowView(OpBuilder &b, Location loc, Value buffer, int64_t row) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(row);
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t d : type.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
}

// A row is copied, not viewed: the kernels take buffers without an offset,
// and one row of a decode step is a few KiB.
static LogicalResult lowerTakeRow(sg::TakeRowOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value out = state.bufferFor(loc, op.getResult());
  linalg::CopyOp::create(
      b, loc, rowView(b, loc, state.lookup(op.getX()), op.getRow()), out);
  state.buffers.map(op.getResult(), out);
  return success();
}

static LogicalResult lowerStackRows(sg::StackRowsOp op,
                                    FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op.getLoc();
  Value out = state.bufferFor(loc, op.getResult());
  for (auto [i, row] : llvm::enumerate(op.getRows()))
    linalg::CopyOp::create(b, loc, state.lookup(row), rowView(b, loc, out, i));
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

Value lowering::getInvFreqTable(FunctionLowering &state, Location loc,
                                ArrayRef<float> inv) {
  OpBuilder &b = state.b;
  std::string name = getOrCreateInvFreqGlobal(b, state.module, loc, inv);
  return memref::GetGlobalOp::create(
      b, loc, MemRefType::get({static_cast<int64_t>(inv.size())}, b.getF32Type()),
      name);
}

/// y[d] = round(round(x[d]*c) + round(rot[d]*s)) with rot the rotate_half of
/// x; c, s are cos/sin of (pos0+i)*inv[d mod D/2] rounded to the element type.
static LogicalResult lowerRopeCommon(Operation *op, Value xTensor, Value pos0,
                                     ArrayRef<float> inv,
                                     FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  Value x = state.lookup(xTensor);
  Value out = state.bufferFor(loc, op->getResult(0));
  auto type = cast<MemRefType>(x.getType());
  Type ct = type.getElementType();
  int64_t d = type.getDimSize(2), half = d / 2;

  Value table = getInvFreqTable(state, loc, inv);

  Value zero = constIndex(b, loc, 0);
  Value halfIdx = constIndex(b, loc, half);
  Value pos0Index = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                              state.lookup(pos0));
  emitFor(b, loc, zero, dimOf(b, loc, x, 0), [&](OpBuilder &b, Location loc, Value s) {
    Value p = arith::AddIOp::create(b, loc, pos0Index, s);
    Value pf = arith::UIToFPOp::create(
        b, loc, b.getF32Type(),
        Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), p)));
    emitFor(b, loc, zero, halfIdx, [&](OpBuilder &b, Location loc, Value k) {
      auto [c, sn] = emitRopeCosSin(b, loc, pf, table, k, ct);
      Value k2 = arith::AddIOp::create(b, loc, k, halfIdx);
      emitFor(b, loc, zero, dimOf(b, loc, x, 1), [&](OpBuilder &b, Location loc, Value h) {
        Value lo = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{s, h, k}));
        Value hi = toF32(b, loc, memref::LoadOp::create(b, loc, x, ValueRange{s, h, k2}));
        auto [yLo, yHi] = emitRotatePair(b, loc, lo, hi, c, sn, ct);
        memref::StoreOp::create(b, loc, yLo, out, ValueRange{s, h, k});
        memref::StoreOp::create(b, loc, yHi, out, ValueRange{s, h, k2});
      });
    });
  });
  state.buffers.map(op->getResult(0), out);
  return success();
}

static LogicalResult lowerRope(sg::RopeOp op, FunctionLowering &state) {
  int64_t d = op.getX().getType().getDimSize(2);
  SmallVector<float> inv = inverseFrequencies(
      d / 2, d / 2, d, op.getTheta().convertToDouble(),
      op.getFactor().convertToDouble());
  return lowerRopeCommon(op, op.getX(), op.getPos0(), inv, state);
}

static LogicalResult lowerPartialRope(sg::PartialRopeOp op,
                                      FunctionLowering &state) {
  int64_t d = op.getX().getType().getDimSize(2);
  int64_t rotatedWidth = static_cast<int64_t>(
      std::llround(op.getRotaryFraction().convertToDouble() * d));
  int64_t basis = op.getBasis() == "head_width" ? d : rotatedWidth;
  SmallVector<float> inv = inverseFrequencies(
      d / 2, rotatedWidth / 2, basis, op.getTheta().convertToDouble(), 1.0);
  return lowerRopeCommon(op, op.getX(), op.getPos0(), inv, state);
}

//===----------------------------------------------------------------------===//
// Pointwise
//===----------------------------------------------------------------------===//

/// Lowers a one-result op whose output element is `fn` of its inputs' f32
/// values, rounded once to the result type.
static LogicalResult lowerPointwise(
    Operation *op, ValueRange tensors, FunctionLowering &state,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  Location loc = op->getLoc();
  SmallVector<Value> inputs;
  for (Value t : tensors)
    inputs.push_back(state.lookup(t));
  Value out = state.bufferFor(loc, op->getResult(0));
  Type ct = elementTypeOf(out);
  emitElementwise(state.b, loc, inputs, out,
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    SmallVector<Value> wide;
                    for (Value a : args)
                      wide.push_back(toF32(b, loc, a));
                    return roundTo(b, loc, fn(b, loc, wide), ct);
                  });
  state.buffers.map(op->getResult(0), out);
  return success();
}

static LogicalResult lowerGeluTanh(sg::GeluTanhOp op, FunctionLowering &state) {
  return lowerPointwise(op, op.getX(), state,
                        [](OpBuilder &b, Location loc, ValueRange v) {
                          return emitGeluTanh(b, loc, v[0]);
                        });
}

static LogicalResult lowerMul(sg::MulOp op, FunctionLowering &state) {
  return lowerPointwise(op, {op.getLhs(), op.getRhs()}, state,
                        [](OpBuilder &b, Location loc, ValueRange v) {
                          return Value(arith::MulFOp::create(b, loc, v[0], v[1]));
                        });
}

static LogicalResult lowerAdd(sg::AddOp op, FunctionLowering &state) {
  return lowerPointwise(op, {op.getLhs(), op.getRhs()}, state,
                        [](OpBuilder &b, Location loc, ValueRange v) {
                          return Value(arith::AddFOp::create(b, loc, v[0], v[1]));
                        });
}

static LogicalResult lowerLayerScalar(sg::LayerScalarOp op,
                                      FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  Value buffer = state.lookup(op.getScalar());
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> zeros(type.getRank(), constIndex(b, loc, 0));
  Value s = toF32(b, loc, memref::LoadOp::create(b, loc, buffer, zeros));
  return lowerPointwise(op, op.getX(), state,
                        [&](OpBuilder &b, Location loc, ValueRange v) {
                          return Value(arith::MulFOp::create(b, loc, v[0], s));
                        });
}

static LogicalResult lowerSoftcap(sg::SoftcapOp op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  Value x = state.lookup(op.getX());
  Value out = state.bufferFor(loc, op->getResult(0));
  double cap = op.getCap().convertToDouble();
  emitElementwise(b, loc, x, out, [&](OpBuilder &b, Location loc, ValueRange v) {
    return emitSoftcap(b, loc, v[0], cap);
  });
  state.buffers.map(op->getResult(0), out);
  return success();
}

ArrayRef<OpLowering> lowering::elementwiseLowerings() {
  static const OpLowering table[] = {
      loweringOf<sg::EmbedOp, lowerEmbed>(),
      loweringOf<sg::RMSNormOp, lowerRMSNorm>(),
      loweringOf<sg::SplitHeadsOp, lowerSplitHeads>(),
      loweringOf<sg::MergeHeadsOp, lowerMergeHeads>(),
      loweringOf<sg::TakeRowOp, lowerTakeRow>(),
      loweringOf<sg::StackRowsOp, lowerStackRows>(),
      loweringOf<sg::RopeOp, lowerRope>(),
      loweringOf<sg::PartialRopeOp, lowerPartialRope>(),
      loweringOf<sg::GeluTanhOp, lowerGeluTanh>(),
      loweringOf<sg::MulOp, lowerMul>(),
      loweringOf<sg::AddOp, lowerAdd>(),
      loweringOf<sg::LayerScalarOp, lowerLayerScalar>(),
      loweringOf<sg::SoftcapOp, lowerSoftcap>()};
  return table;
}
