//===- ProgrammaticLaunch.h - kernels that may start early ------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CUDA_PROGRAMMATICLAUNCH_H
#define SGC_COMPILER_TARGET_CUDA_PROGRAMMATICLAUNCH_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::sgc {

/// The module attribute saying every kernel of its gpu.modules waits for
/// its predecessor (the emitter sets SGC_ABI_CUDA_KERNEL_WAITS on each).
constexpr StringLiteral kProgrammaticLaunchAttr = "sg.programmatic_launch";

/// `sgc-programmatic-launch`, on the module after the emulator's copies are
/// made: every gpu.func kernel starts with `griddepcontrol.wait` (nothing
/// of it runs before the kernels before it in the stream have finished and
/// their writes are visible), so it computes exactly what it computed
/// launched alone, and a runtime may launch it with programmatic stream
/// serialization (PDL): the next kernel is set up while this one drains.
/// No `griddepcontrol.launch_dependents`: issued first in every kernel it
/// let the next kernel's blocks in as soon as this one's had started, and
/// gemma-3-12b's graph decode on an H200 fell from 126.3 to 106 tok/s;
/// without it, 126.6-127.1 against 126.3-126.4 with PDL off.
std::unique_ptr<Pass> createProgrammaticLaunchPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_PROGRAMMATICLAUNCH_H
