//===- KeyRotation.h - the rotation of keys rebuilt from values -*- C++ -*-===//
//
// Part of sgc. On Gemma 4's full layers a V-only cache holds no keys: both
// lowerings rebuild each cached key from its value row and rotate it. What
// the rotation is, and the cos and sin it takes, are defined once here.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_COMMON_KEYROTATION_H
#define SGC_COMPILER_CONVERSION_COMMON_KEYROTATION_H

#include "dialects/SG/IR/SGOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir::sgc::lowering::attention {

/// The rotation of the keys an sg.full_attn with keys_from_values rebuilds,
/// from its key_* attributes: pairs (k, k + d/2) for k < rotated, inverse
/// frequencies over `basis` with `theta` (both targets read them here).
struct KeyRotation {
  int64_t rotated = 0, basis = 0;
  double theta = 0;
};
KeyRotation keyRotationOf(sg::FullAttnOp op);

/// (cos, sin) of f32 angles (a scalar or a vector), via f64: within 1e-13 of
/// the exact values before their rounding to f32, for |angle| < 2^30.
std::pair<Value, Value> emitCosSin(ImplicitLocOpBuilder &b, Value angle);

} // namespace mlir::sgc::lowering::attention

#endif // SGC_COMPILER_CONVERSION_COMMON_KEYROTATION_H
