//===- ExitCodes.h - exit codes of the sgc tools ----------------*- C++ -*-===//
//
// Part of sgc. The same codes as the runtime (ARCHITECTURE.md §4).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_DRIVER_EXITCODES_H
#define SGC_COMPILER_DRIVER_EXITCODES_H

namespace mlir::sgc {

enum ExitCode : int {
  kExitOk = 0,
  /// A bad input file: graph, checkpoint, image, a .so that is not ours.
  kExitBadInput = 1,
  /// Bad command-line usage.
  kExitUsage = 2,
  /// Model / checkpoint / ABI mismatch.
  kExitMismatch = 3,
  /// The device, or a tool the target needs (cc, ptxas), is unavailable.
  kExitDevice = 4,
  /// An internal error (a bug in sgc).
  kExitInternal = 5,
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_DRIVER_EXITCODES_H
