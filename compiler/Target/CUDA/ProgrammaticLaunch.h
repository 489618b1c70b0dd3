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
/// their writes are visible) and then `griddepcontrol.launch_dependents`
/// (the next kernel may be scheduled once every block of this one has
/// started). With both first, a kernel computes exactly what it computed
/// launched alone, and a runtime may launch it with programmatic stream
/// serialization (PDL): its blocks are resident and waiting when the
/// previous kernel ends, instead of being launched then.
std::unique_ptr<Pass> createProgrammaticLaunchPass();

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CUDA_PROGRAMMATICLAUNCH_H
