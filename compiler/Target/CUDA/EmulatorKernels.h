//===- EmulatorKernels.h - the CUDA kernels compiled for the host -*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H
#define SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::sgc {

/// Prefix of the host copy of each kernel and of the runtime calls it makes.
inline constexpr const char *kEmuKernelPrefix = "sgc_emu_k_";
inline constexpr const char *kEmuRuntimePrefix = "sgc_emu_rt_";

/// `sgc-gpu-to-emu`: for every kernel of `gpu.module @sgc_kernels`, a host
/// function `@sgc_emu_k_<kernel>(ops, params...)` that runs ONE GPU thread
/// (CUDA.md §0.5): thread and block ids, barriers and shuffles become calls
/// of the emulator's ops (through `@sgc_emu_rt_*`, defined by the glue),
/// workgroup memory becomes views of the block's shared memory, and every
/// memref access is bounds-checked against its static shape. Each
/// collective or check gets a site number; the module attribute
/// `sg.emu_sites` lists them. The gpu.module itself is left for the device
/// pipeline.
std::unique_ptr<Pass> createGPUToEmulatorPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_EMULATORKERNELS_H
