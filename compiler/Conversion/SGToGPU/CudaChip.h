//===- CudaChip.h - what the kernel emitters know of the GPU ----*- C++ -*-===//
//
// Part of sgc. One description of the chip a CUDA build targets, handed to
// kernel selection and to every emitter: the limits a kernel must keep
// (shared memory, shared with the runtime through abi.h) and the sizes the
// grids are planned from (SMs, registers, shared memory an SM holds).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOGPU_CUDACHIP_H
#define SGC_COMPILER_CONVERSION_SGTOGPU_CUDACHIP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::sgc::gpu_kernels {

struct CudaChip {
  /// The target name (`sm_90a`) and the GPU its sizes are of.
  llvm::StringRef name, gpu;
  /// Streaming multiprocessors.
  int64_t sms;
  /// 32-bit registers one SM holds.
  int64_t registersPerSM;
  /// Shared memory one SM holds, what the driver keeps of it per resident
  /// block, and the unit blocks are given it in.
  int64_t sharedPerSM, sharedReservedPerBlock, sharedUnit;
  /// What a kernel may declare statically (all a block has without the
  /// opt-in), and static plus dynamic bytes with it (abi.h).
  int64_t staticSharedLimit, blockSharedLimit;

  /// The chip of a `--target=cuda:<name>` name, or null if sgc has none.
  static const CudaChip *lookup(llvm::StringRef name);
  /// The chip the CUDA target builds for by default (sm_90a).
  static const CudaChip &getDefault();
};

} // namespace mlir::sgc::gpu_kernels

#endif // SGC_COMPILER_CONVERSION_SGTOGPU_CUDACHIP_H
