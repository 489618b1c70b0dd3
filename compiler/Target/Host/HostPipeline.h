//===- HostPipeline.h - buffers and loops -> LLVM for the host --*- C++ -*-===//
//
// Part of sgc. The codegen phase of the CPU target, also the one of the CUDA
// target's host code (the plan's glue and the emulator's kernel copies).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_HOST_HOSTPIPELINE_H
#define SGC_COMPILER_TARGET_HOST_HOSTPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace mlir::sgc {

/// Buffers and loops -> the LLVM dialect for the host CPU (with
/// `barePointers`, static memrefs are passed as plain pointers); with
/// `perFunction`, the passes that see one function at a time nest under the
/// functions, so the context's threads share them.
void buildHostCodegenPipeline(OpPassManager &pm, bool barePointers,
                              bool perFunction = false);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_HOST_HOSTPIPELINE_H
