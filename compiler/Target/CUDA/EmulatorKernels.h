//===- EmulatorKernels.h - the CUDA kernels compiled for the host -*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H
#define SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H

namespace mlir::sgc {

/// Prefix of the host copy of each kernel and of the runtime calls it makes
/// (sgc-gpu-to-emu, compiler/Target/Passes.td).
inline constexpr const char *kEmuKernelPrefix = "sgc_emu_k_";
inline constexpr const char *kEmuRuntimePrefix = "sgc_emu_rt_";

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H
