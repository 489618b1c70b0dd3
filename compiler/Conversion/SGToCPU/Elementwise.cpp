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
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value table = state.lookup(op.getTable());
  Value ids = state.lookup(op.getIds());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  Value scale =
      constF32(b, static_cast<float>(op.getScale().convertToDouble()));
  Value zero = constIndex(b, 0);
  Value hidden = dimOf(b, out, 1);
  Value vocab = dimOf(b, table, 0);
  Type tableType = op.getTable().getType().getElementType();
  emitFor(b, zero, dimOf(b, out, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    Value id = memref::LoadOp::create(b, ids, ValueRange{s});
    Value row = arith::IndexCastOp::create(b, b.getIndexType(), id);
    // Ids outside the table read row 0 instead of stray memory; the
    // runtime rejects them before calling.
    Value inRange =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, vocab);
    row = arith::SelectOp::create(b, inRange, row, zero);
    emitFor(b, zero, hidden, [&](ImplicitLocOpBuilder &b, Value h) {
      Value e = loadWeightF32(b, table, tableType, row, h, 1, ct);
      Value y = arith::MulFOp::create(b, e, scale);
      memref::StoreOp::create(b, roundTo(b, y, ct), out, ValueRange{s, h});
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
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  auto xType = cast<MemRefType>(x.getType());
  int64_t width = xType.getShape().back();
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = elementTypeOf(out);
  double eps = op.getEps().convertToDouble();
  Value weight = op.getWeight() ? state.lookup(op.getWeight()) : Value();
  bool plusOne = op.getWeightOffsetAttr().getInt() == 1;

  // One loop per leading dimension, then the row.
  std::function<void(ImplicitLocOpBuilder &, SmallVector<Value>)> rows =
      [&](ImplicitLocOpBuilder &b, SmallVector<Value> idx) {
        if (idx.size() + 1 < static_cast<size_t>(xType.getRank())) {
          Value zero = constIndex(b, 0);
          Value size = dimOf(b, x, idx.size());
          emitFor(b, zero, size, [&](ImplicitLocOpBuilder &b, Value i) {
            SmallVector<Value> inner(idx);
            inner.push_back(i);
            rows(b, inner);
          });
          return;
        }
        auto load = [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
          return emitRowLoad(b, x, idx, col, lanes);
        };
        Value r = emitRmsScale(b, width, eps, load);
        emitRowChunks(
            b, width, [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
              Value w = weight
                            ? emitRowLoad(b, weight, ValueRange{}, col, lanes)
                            : Value();
              emitRowStore(
                  b, emitNormalize(b, load(b, col, lanes), r, w, plusOne, ct),
                  out, idx, col);
            });
      };
  rows(b, {});
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Head views
//===----------------------------------------------------------------------===//

static LogicalResult lowerSplitHeads(sg::SplitHeadsOp op,
                                     FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  auto resultType = op.getResult().getType();
  auto type = MemRefType::get(resultType.getShape(), resultType.getElementType());
  SmallVector<OpFoldResult> shape = {
      resultType.isDynamicDim(0)
          ? OpFoldResult(dimOf(b, x, 0))
          : OpFoldResult(b.getIndexAttr(resultType.getDimSize(0))),
      b.getIndexAttr(resultType.getDimSize(1)),
      b.getIndexAttr(resultType.getDimSize(2))};
  Value view = memref::ExpandShapeOp::create(
      b, type, x, ArrayRef<ReassociationIndices>{{0}, {1, 2}}, shape);
  state.buffers.map(op.getResult(), view);
  return success();
}

static LogicalResult lowerMergeHeads(sg::MergeHeadsOp op,
                                     FunctionLowering &state) {
  ImplicitLocOpBuilder b(op.getLoc(), state.b);
  Value x = state.lookup(op.getX());
  Value view = memref::CollapseShapeOp::create(
      b, x, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  state.buffers.map(op.getResult(), view);
  return success();
}

//===----------------------------------------------------------------------===//
// Rows of a batched decode step
//===----------------------------------------------------------------------===//

/// The subview of `buffer` at leading index `row`, one row deep.
static Value rowView(ImplicitLocOpBuilder &b, Value buffer, int64_t row) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(row);
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t d : type.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  return memref::SubViewOp::create(b, buffer, offsets, sizes, strides);
}

// A row is copied, not viewed: the kernels take buffers without an offset,
// and one row of a decode step is a few KiB.
static LogicalResult lowerTakeRow(sg::TakeRowOp op, FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value out = state.bufferFor(loc, op.getResult());
  linalg::CopyOp::create(b, rowView(b, state.lookup(op.getX()), op.getRow()),
                         out);
  state.buffers.map(op.getResult(), out);
  return success();
}

static LogicalResult lowerStackRows(sg::StackRowsOp op,
                                    FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value out = state.bufferFor(loc, op.getResult());
  for (auto [i, row] : llvm::enumerate(op.getRows()))
    linalg::CopyOp::create(b, state.lookup(row), rowView(b, out, i));
  state.buffers.map(op.getResult(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

Value lowering::getInvFreqTable(FunctionLowering &state, Location loc,
                                ArrayRef<float> inv) {
  ImplicitLocOpBuilder b(loc, state.b);
  std::string name = getOrCreateInvFreqGlobal(b, state.module, loc, inv);
  return memref::GetGlobalOp::create(
      b, MemRefType::get({static_cast<int64_t>(inv.size())}, b.getF32Type()),
      name);
}

/// y[d] = round(round(x[d]*c) + round(rot[d]*s)) with rot the rotate_half of
/// x; c, s are cos/sin of (pos0+i)*inv[d mod D/2] rounded to the element type.
static LogicalResult lowerRopeCommon(Operation *op, Value xTensor, Value pos0,
                                     ArrayRef<float> inv,
                                     FunctionLowering &state) {
  Location loc = op->getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(xTensor);
  Value out = state.bufferFor(loc, op->getResult(0));
  auto type = cast<MemRefType>(x.getType());
  Type ct = type.getElementType();
  int64_t d = type.getDimSize(2), half = d / 2;

  Value table = getInvFreqTable(state, loc, inv);

  Value zero = constIndex(b, 0);
  Value halfIdx = constIndex(b, half);
  Value pos0Index =
      arith::IndexCastOp::create(b, b.getIndexType(), state.lookup(pos0));
  emitFor(b, zero, dimOf(b, x, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    Value p = arith::AddIOp::create(b, pos0Index, s);
    Value pf = arith::UIToFPOp::create(
        b, b.getF32Type(),
        Value(arith::IndexCastOp::create(b, b.getI64Type(), p)));
    emitFor(b, zero, halfIdx, [&](ImplicitLocOpBuilder &b, Value k) {
      auto [c, sn] = emitRopeCosSin(b, pf, table, k, ct);
      Value k2 = arith::AddIOp::create(b, k, halfIdx);
      emitFor(b, zero, dimOf(b, x, 1), [&](ImplicitLocOpBuilder &b, Value h) {
        Value lo = toF32(b, memref::LoadOp::create(b, x, ValueRange{s, h, k}));
        Value hi = toF32(b, memref::LoadOp::create(b, x, ValueRange{s, h, k2}));
        auto [yLo, yHi] = emitRotatePair(b, lo, hi, c, sn, ct);
        memref::StoreOp::create(b, yLo, out, ValueRange{s, h, k});
        memref::StoreOp::create(b, yHi, out, ValueRange{s, h, k2});
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
    llvm::function_ref<Value(ImplicitLocOpBuilder &, ValueRange)> fn) {
  Location loc = op->getLoc();
  SmallVector<Value> inputs;
  for (Value t : tensors)
    inputs.push_back(state.lookup(t));
  Value out = state.bufferFor(loc, op->getResult(0));
  Type ct = elementTypeOf(out);
  ImplicitLocOpBuilder b(loc, state.b);
  emitElementwise(b, inputs, out,
                  [&](ImplicitLocOpBuilder &b, ValueRange args) {
                    SmallVector<Value> wide;
                    for (Value a : args)
                      wide.push_back(toF32(b, a));
                    return roundTo(b, fn(b, wide), ct);
                  });
  state.buffers.map(op->getResult(0), out);
  return success();
}

static LogicalResult lowerGeluTanh(sg::GeluTanhOp op, FunctionLowering &state) {
  return lowerPointwise(op, op.getX(), state,
                        [](ImplicitLocOpBuilder &b, ValueRange v) {
                          return emitGeluTanh(b, v[0]);
                        });
}

static LogicalResult lowerMul(sg::MulOp op, FunctionLowering &state) {
  return lowerPointwise(op, {op.getLhs(), op.getRhs()}, state,
                        [](ImplicitLocOpBuilder &b, ValueRange v) {
                          return Value(arith::MulFOp::create(b, v[0], v[1]));
                        });
}

static LogicalResult lowerAdd(sg::AddOp op, FunctionLowering &state) {
  return lowerPointwise(op, {op.getLhs(), op.getRhs()}, state,
                        [](ImplicitLocOpBuilder &b, ValueRange v) {
                          return Value(arith::AddFOp::create(b, v[0], v[1]));
                        });
}

static LogicalResult lowerLayerScalar(sg::LayerScalarOp op,
                                      FunctionLowering &state) {
  Location loc = op->getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value buffer = state.lookup(op.getScalar());
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> zeros(type.getRank(), constIndex(b, 0));
  Value s = toF32(b, memref::LoadOp::create(b, buffer, zeros));
  return lowerPointwise(op, op.getX(), state,
                        [&](ImplicitLocOpBuilder &b, ValueRange v) {
                          return Value(arith::MulFOp::create(b, v[0], s));
                        });
}

static LogicalResult lowerSoftcap(sg::SoftcapOp op, FunctionLowering &state) {
  Location loc = op->getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value x = state.lookup(op.getX());
  Value out = state.bufferFor(loc, op->getResult(0));
  double cap = op.getCap().convertToDouble();
  emitElementwise(b, x, out, [&](ImplicitLocOpBuilder &b, ValueRange v) {
    return emitSoftcap(b, v[0], cap);
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
