//===- Driver.h - the library behind the sgc tool ---------------*- C++ -*-===//
//
// Part of sgc. tools/sgc/sgc.cpp is a thin main around runSgcMain.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_DRIVER_DRIVER_H
#define SGC_COMPILER_DRIVER_DRIVER_H

namespace mlir::sgc {

/// Runs `sgc <command> ...`; returns the process exit code (ExitCodes.h).
int runSgcMain(int argc, char **argv);

} // namespace mlir::sgc

#endif // SGC_COMPILER_DRIVER_DRIVER_H
