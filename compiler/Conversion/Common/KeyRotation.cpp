//===- KeyRotation.cpp - the rotation of keys rebuilt from values ---------===//
//
// Part of sgc. The angles reach position · 1 rad (262,144 rad at the longest
// context), so cos and sin are computed here rather than by libm one lane at
// a time: the f32 angle is reduced by π/2 in f64 (two FMAs against a
// two-part π/2, exact to ~1e-16 for angles below 2^30) and the f64 Taylor
// polynomials of degree 13 and 12 on [-π/4, π/4] (truncation < 3e-14) give
// values within 1e-13 of the exact ones before the f32 rounding: the same f32
// as libm's correctly rounded results except within 1e-13 of a rounding
// boundary.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/KeyRotation.h"
#include "compiler/Conversion/Common/ReferenceMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::attention;

attention::KeyRotation attention::keyRotationOf(sg::FullAttnOp op) {
  int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(2);
  int64_t width =
      std::llround(op.getKeyRotaryFractionAttr().getValueAsDouble() * d);
  KeyRotation r;
  r.rotated = width / 2;
  r.basis = *op.getKeyBasis() == "head_width" ? d : width;
  r.theta = op.getKeyThetaAttr().getValueAsDouble();
  return r;
}

std::pair<Value, Value> attention::emitCosSin(ImplicitLocOpBuilder &b,
                                              Value angle) {
  Type f64 = withElementType(angle.getType(), b.getF64Type());
  // The quadrant count fits i32 (|angle| < 2^30), which AVX2 converts to
  // from f64 in vectors (i64 would take AVX512DQ).
  Type i32 = withElementType(angle.getType(), b.getI32Type());
  auto c = [&](double v) { return constLike(b, b.getF64FloatAttr(v), f64); };
  auto ci = [&](int32_t v) {
    return constLike(b, b.getI32IntegerAttr(v), i32);
  };
  Value x = arith::ExtFOp::create(b, f64, angle);
  // q = round(x · 2/π); r = x − q·π/2 with π/2 = hi + lo. (Constants one a
  // statement, in the order GCC built them: argument order differs between
  // compilers.)
  Value half = c(0.5);
  Value twoOverPi = c(0.63661977236758134);
  Value q = math::FloorOp::create(
      b, Value(math::FmaOp::create(b, x, twoOverPi, half)));
  Value negQ = arith::NegFOp::create(b, q);
  Value r = math::FmaOp::create(b, negQ, c(1.5707963267948966), x);
  r = math::FmaOp::create(b, negQ, c(6.123233995736766e-17), r);
  Value r2 = arith::MulFOp::create(b, r, r);
  // Horner in r²: sum_k coeffs[k] · r2^k.
  auto poly = [&](ArrayRef<double> coeffs) {
    Value acc = c(coeffs.back());
    for (double k : llvm::reverse(coeffs.drop_back()))
      acc = math::FmaOp::create(b, acc, r2, c(k));
    return acc;
  };
  Value sinR = arith::MulFOp::create(
      b, r,
      poly({1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880,
            -1.0 / 39916800, 1.0 / 6227020800.0}));
  Value cosR = poly({1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320,
                     -1.0 / 3628800, 1.0 / 479001600});
  // Quadrant n = q mod 4: (cos, sin) = (cosR, sinR), (−sinR, cosR),
  // (−cosR, −sinR), (sinR, −cosR).
  Value n = arith::FPToSIOp::create(b, i32, q);
  auto bitSet = [&](Value v, int32_t bit) -> Value {
    Value zero = ci(0);
    Value masked = arith::AndIOp::create(b, v, ci(bit));
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, masked, zero);
  };
  Value swap = bitSet(n, 1);
  Value cosV = arith::SelectOp::create(b, swap, sinR, cosR);
  Value sinV = arith::SelectOp::create(b, swap, cosR, sinR);
  Value cosNeg = bitSet(Value(arith::AddIOp::create(b, n, ci(1))), 2);
  Value sinNeg = bitSet(n, 2);
  cosV =
      arith::SelectOp::create(b, cosNeg, arith::NegFOp::create(b, cosV), cosV);
  sinV =
      arith::SelectOp::create(b, sinNeg, arith::NegFOp::create(b, sinV), sinV);
  return {arith::TruncFOp::create(b, angle.getType(), cosV),
          arith::TruncFOp::create(b, angle.getType(), sinV)};
}
