//===- IRDump.h - write the IR after every pass -----------------*- C++ -*-===//
//
// Part of sgc. Backs `--dump-ir-after-each=DIR`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_PIPELINES_IRDUMP_H
#define SGC_COMPILER_PIPELINES_IRDUMP_H

#include "mlir/Pass/PassInstrumentation.h"

#include <string>

namespace mlir::sgc {

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
