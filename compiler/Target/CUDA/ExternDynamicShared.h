//===- ExternDynamicShared.h - dynamic shared memory as an extern -*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CUDA_EXTERNDYNAMICSHARED_H
#define SGC_COMPILER_TARGET_CUDA_EXTERNDYNAMICSHARED_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::sgc {

/// `sgc-extern-dynamic-shared`, on a gpu.module after convert-gpu-to-nvvm:
/// gives the zero-length shared arrays that `gpu.dynamic_shared_memory`
/// lowers to external linkage. MLIR 22 makes them internal, which the
/// NVPTX backend prints as a static `.shared .b8 x;` (1 byte, ptxas places
/// the other static buffers after it: they would overlap the dynamic row);
/// an extern prints as `.extern .shared .b8 x[];`, the launch's dynamic
/// bytes, as CUDA C's `extern __shared__`.
std::unique_ptr<Pass> createExternDynamicSharedPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_EXTERNDYNAMICSHARED_H
