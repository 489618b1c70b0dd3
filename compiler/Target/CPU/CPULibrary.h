//===- CPULibrary.h - LLVM-dialect module -> model .so ----------*- C++ -*-===//
//
// Part of sgc. The CPU back end of the emit phase: compiles the lowered module
// once per CPU variant (Host/HostLibrary.h), generates the glue from the
// module's plan (the ABI tables, a function per plan callee, the dispatchers
// that spread kernels over the runtime's threads) and links all of it into
// one shared library that exports only `sgc_model_query`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_CPU_CPULIBRARY_H
#define SGC_COMPILER_TARGET_CPU_CPULIBRARY_H

#include "compiler/Target/Host/HostLibrary.h"

namespace mlir::sgc {

/// Generates the C glue for `module` (which must carry the plan and the
/// lowered bodies) and `variants`. Fails with a diagnostic on a plan the
/// glue cannot express.
FailureOr<std::string> emitCPUGlue(ModuleOp module,
                                   ArrayRef<CPUVariant> variants);

/// Builds the model library at `options.outputPath` from an LLVM-dialect
/// module (and writes the glue to `options.dumpDir` when given).
EmitResult emitCPULibrary(ModuleOp module, const EmitOptions &options);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_CPU_CPULIBRARY_H
