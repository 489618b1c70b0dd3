//===- ApproximateMath.h - math.tanh and math.exp as arithmetic -*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CPU_APPROXIMATEMATH_H
#define SGC_COMPILER_TARGET_CPU_APPROXIMATEMATH_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::sgc {

/// `sgc-approximate-math`: every f32 math.tanh and math.exp (scalar or
/// vector) becomes MLIR's approximation, so GELU and the softmax vectorize
/// instead of calling libm per lane.
std::unique_ptr<Pass> createApproximateMathPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CPU_APPROXIMATEMATH_H
