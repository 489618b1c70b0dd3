//===- ApproximateTanh.h - math.tanh as arithmetic --------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CPU_APPROXIMATETANH_H
#define SGC_COMPILER_TARGET_CPU_APPROXIMATETANH_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::sgc {

/// `sgc-approximate-tanh`: every f32 math.tanh (scalar or vector) becomes
/// MLIR's rational approximation, so GELU vectorizes instead of calling libm
/// per lane.
std::unique_ptr<Pass> createApproximateTanhPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CPU_APPROXIMATETANH_H
