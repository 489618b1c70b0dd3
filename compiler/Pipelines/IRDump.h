//===- IRDump.h - write the IR after every pass -----------------*- C++ -*-===//
//
// Part of sgc. Backs `--dump-ir-after-each=DIR`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_PIPELINES_IRDUMP_H
#define SGC_COMPILER_PIPELINES_IRDUMP_H

#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::sgc {

/// "" when `path` can be written by writeOutputFile, else the one-line error
/// ("cannot write 'PATH': ..."): its directory is missing or takes no new
/// files, it is a directory, or a file without write permission. "-" is
/// stdout. Drivers call it before any work, so a bad -o costs nothing.
std::string checkOutputPath(llvm::StringRef path);

/// Writes `path` whole or not at all: into a temporary next to it that is
/// renamed over it once complete (and removed on failure or Ctrl-C). "-" is
/// stdout; an existing file that is not a regular one (/dev/null) is written
/// in place. Returns "" or the one-line error.
std::string writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Creates the dump directory `dir` (and its parents) and checks that it
/// takes new files: "" or the one-line error. For before any work starts.
std::string prepareDumpDir(llvm::StringRef dir);

/// Writes the whole top-level module to `DIR/NN-<pass>.mlir` after every
/// pass, numbered in execution order from `firstIndex`. The text is exactly
/// what `sgc-opt` prints for the same module, so any dump can be replayed.
/// Needs a context without multithreading (passes must run in order).
class IRDumpInstrumentation : public PassInstrumentation {
public:
  IRDumpInstrumentation(std::string dir, unsigned firstIndex)
      : dir(std::move(dir)), nextIndex(firstIndex) {}

  void runAfterPass(Pass *pass, Operation *op) override;
  void runAfterPassFailed(Pass *pass, Operation *op) override;

  /// Writes `op`'s top-level module as `DIR/NN-<name>.mlir`; returns false
  /// and sets `error` if the file cannot be written.
  bool dump(llvm::StringRef name, Operation *op);

  /// The first write error, if any ("" otherwise).
  const std::string &getError() const { return error; }

private:
  std::string dir;
  unsigned nextIndex;
  std::string error;
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_PIPELINES_IRDUMP_H
