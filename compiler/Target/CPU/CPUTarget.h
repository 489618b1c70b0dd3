//===- CPUTarget.h - the CPU target -----------------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CPU_CPUTARGET_H
#define SGC_COMPILER_TARGET_CPU_CPUTARGET_H

#include "compiler/Target/Target.h"

namespace mlir::sgc {

/// sg bodies -> CPU kernels on buffers -> the LLVM dialect -> one
/// object per CPU variant, linked with the C glue into a .so.
const Target &getCPUTarget();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CPU_CPUTARGET_H
