//===- Registration.h - everything sgc registers ----------------*- C++ -*-===//
//
// Part of sgc. One function each for dialects and passes, shared by sgc,
// sgc-opt and tests, so every tool sees the same set.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_PIPELINES_REGISTRATION_H
#define SGC_COMPILER_PIPELINES_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::sgc {

/// Adds the sg dialect and every upstream dialect the pipelines produce.
void registerSgcDialects(DialectRegistry &registry);

/// Registers sgc's passes, the upstream passes the pipelines use, and the
/// phase pipelines (`sgc-<phase>`).
void registerSgcPasses();

} // namespace mlir::sgc

#endif // SGC_COMPILER_PIPELINES_REGISTRATION_H
