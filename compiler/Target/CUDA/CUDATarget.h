//===- CUDATarget.h - the CUDA target ---------------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CUDA_CUDATARGET_H
#define SGC_COMPILER_TARGET_CUDA_CUDATARGET_H

#include "compiler/Target/Target.h"

namespace mlir::sgc {

/// sg bodies -> specialized gpu.func kernels -> NVVM -> PTX -> an sm_90a
/// cubin (ptxas) in a fatbin, plus the same kernels compiled for the host
/// (the emulator's), linked with the launch table into a .so.
const Target &getCUDATarget();

/// The CUDA toolkit's root (libdevice, ptxas, fatbinary): $CUDA_HOME,
/// $CUDA_ROOT or $CUDA_PATH, else the folder above the ptxas on PATH, else
/// /usr/local/cuda.
std::string findCUDAToolkit();

/// Writes the CUDA model library for a module after the CUDA codegen phase.
EmitResult emitCUDALibrary(ModuleOp module, const EmitOptions &options);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_CUDATARGET_H
