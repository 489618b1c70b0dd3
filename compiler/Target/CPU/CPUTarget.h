//===- CPUTarget.h - the CPU target -----------------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CPU_CPUTARGET_H
#define SGC_COMPILER_TARGET_CPU_CPUTARGET_H

#include "compiler/Target/Target.h"

namespace mlir::sgc {

/// sg bodies -> linalg/scf/vector on buffers -> the LLVM dialect -> one
/// object per CPU variant, linked with the C glue into a .so.
const Target &getCPUTarget();

/// Buffers and loops -> the LLVM dialect for the host CPU: the CPU target's
/// codegen phase, also used for the host copies of CUDA kernels (with
/// `barePointers`, static memrefs are passed as plain pointers).
void buildHostCodegenPipeline(OpPassManager &pm, bool barePointers,
                              bool perFunction = false);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CPU_CPUTARGET_H
