//===- ReferenceMath.cpp - the reference's numerics as IR -----------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/ReferenceMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

/// `type` with its element type (or itself, a scalar) replaced by `element`.
Type lowering::withElementType(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

Value lowering::toF32(ImplicitLocOpBuilder &b, Value v) {
  if (getElementTypeOrSelf(v.getType()).isF32())
    return v;
  return arith::ExtFOp::create(b, withElementType(v.getType(), b.getF32Type()),
                               v);
}

Value lowering::roundTo(ImplicitLocOpBuilder &b, Value v, Type type) {
  if (type == getElementTypeOrSelf(v.getType()))
    return v;
  return arith::TruncFOp::create(b, withElementType(v.getType(), type), v);
}

Value lowering::widenWeight(ImplicitLocOpBuilder &b, Value w, Type ct) {
  Value wide = toF32(b, w);
  if (!getElementTypeOrSelf(w.getType()).isF16() || !ct.isBF16())
    return wide;
  return toF32(b, roundTo(b, wide, ct));
}

Value lowering::constF32(ImplicitLocOpBuilder &b, float value) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(value));
}

Value lowering::constLike(ImplicitLocOpBuilder &b, TypedAttr scalar,
                          Type like) {
  auto vector = dyn_cast<VectorType>(like);
  if (!vector)
    return arith::ConstantOp::create(b, scalar);
  auto type = vector.clone(scalar.getType());
  return arith::ConstantOp::create(b, type,
                                   DenseElementsAttr::get(type, scalar));
}

Value lowering::constF32Like(ImplicitLocOpBuilder &b, float value, Type like) {
  return constLike(b, b.getF32FloatAttr(value), like);
}

Value lowering::constIndex(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

Value lowering::emitNormalize(ImplicitLocOpBuilder &b, Value x, Value r,
                              Value w, bool plusOne, Type ct) {
  Value xf = toF32(b, x);
  if (auto vec = dyn_cast<VectorType>(xf.getType()))
    r = vector::BroadcastOp::create(b, vec, r);
  Value v = arith::MulFOp::create(b, xf, r);
  if (w) {
    Value wf = toF32(b, w);
    if (plusOne)
      wf = arith::AddFOp::create(b, constF32Like(b, 1.0f, wf.getType()), wf);
    v = arith::MulFOp::create(b, v, wf);
  }
  return roundTo(b, v, ct);
}

/// The inverse frequencies as the reference computes them in f32:
/// inv[k] = 1 / theta^(f32(2k) / basis) for k < rotated, 0 beyond, each
/// divided by `factor` (linear scaling).
SmallVector<float> lowering::inverseFrequencies(int64_t half, int64_t rotated,
                                               int64_t basis, double theta,
                                               double factor) {
  SmallVector<float> inv(half, 0.0f);
  for (int64_t k = 0; k < rotated; ++k) {
    float exponent = static_cast<float>(2 * k) / static_cast<float>(basis);
    float p = std::pow(static_cast<float>(theta), exponent);
    inv[k] = (1.0f / p) / static_cast<float>(factor);
  }
  return inv;
}

std::string lowering::getOrCreateInvFreqGlobal(OpBuilder &b,
                                               Operation *symbolTable,
                                               Location loc,
                                               ArrayRef<float> inv) {
  int64_t half = inv.size();
  // Named by an FNV-1a hash of the exact bits (stable across runs), so equal
  // tables are shared.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (float f : inv) {
    hash ^= llvm::bit_cast<uint32_t>(f);
    hash *= 0x100000001b3ull;
  }
  std::string name = "sgc_rope_inv_freq_" + std::to_string(half) + "_" +
                     llvm::utohexstr(hash);
  if (!SymbolTable::lookupSymbolIn(symbolTable, name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&symbolTable->getRegion(0).front());
    auto values = DenseElementsAttr::get(
        RankedTensorType::get({half}, b.getF32Type()), inv);
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"),
                             MemRefType::get({half}, b.getF32Type()), values,
                             /*constant=*/true, /*alignment=*/IntegerAttr());
  }
  return name;
}

std::pair<Value, Value> lowering::emitRopeCosSin(ImplicitLocOpBuilder &b,
                                                 Value pf, Value table, Value k,
                                                 Type ct) {
  Value f = memref::LoadOp::create(b, table, ValueRange{k});
  Value angle = arith::MulFOp::create(b, pf, f);
  Value c = toF32(b, roundTo(b, math::CosOp::create(b, angle), ct));
  Value sn = toF32(b, roundTo(b, math::SinOp::create(b, angle), ct));
  return {c, sn};
}

std::pair<Value, Value> lowering::emitRotatePair(ImplicitLocOpBuilder &b,
                                                 Value lo, Value hi, Value c,
                                                 Value sn, Type ct) {
  auto term = [&](Value a, Value t) {
    return toF32(b, roundTo(b, arith::MulFOp::create(b, a, t), ct));
  };
  // y[k] = x[k]·c − x[k+D/2]·s; y[k+D/2] = x[k+D/2]·c + x[k]·s. One term a
  // statement: the order of a call's arguments differs between compilers
  // (this is the order GCC built).
  Value hiSin = term(hi, sn);
  Value loCos = term(lo, c);
  Value yLo = arith::SubFOp::create(b, loCos, hiSin);
  Value loSin = term(lo, sn);
  Value hiCos = term(hi, c);
  Value yHi = arith::AddFOp::create(b, hiCos, loSin);
  return {roundTo(b, yLo, ct), roundTo(b, yHi, ct)};
}

Value lowering::emitGeluTanh(ImplicitLocOpBuilder &b, Value z) {
  auto c = [&](float value) { return constF32Like(b, value, z.getType()); };
  Value cube =
      arith::MulFOp::create(b, Value(arith::MulFOp::create(b, z, z)), z);
  Value inner = arith::AddFOp::create(
      b, z, Value(arith::MulFOp::create(b, c(0.044715f), cube)));
  const float beta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
  Value t =
      math::TanhOp::create(b, Value(arith::MulFOp::create(b, c(beta), inner)));
  Value onePlus = arith::AddFOp::create(b, c(1.0f), t);
  Value half = arith::MulFOp::create(b, c(0.5f), z);
  return arith::MulFOp::create(b, half, onePlus);
}

Value lowering::emitSoftcap(ImplicitLocOpBuilder &b, Value v, double capValue) {
  Type type = getElementTypeOrSelf(v.getType());
  Value cap = constF32Like(b, static_cast<float>(capValue), v.getType());
  Value t1 =
      toF32(b, roundTo(b, arith::DivFOp::create(b, toF32(b, v), cap), type));
  Value t2 = toF32(b, roundTo(b, math::TanhOp::create(b, t1), type));
  return roundTo(b, arith::MulFOp::create(b, t2, cap), type);
}
