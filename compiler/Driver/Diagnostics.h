//===- Diagnostics.h - render diagnostics against the user's file -*- C++ -*-=//
//
// Part of sgc. MLIR's stock handler drops the NameLoc around a file location,
// which is where the importer keeps the JSON path. This handler prints
// `file:line:col: error: [$.json.path] message` and the notes after it.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_DRIVER_DIAGNOSTICS_H
#define SGC_COMPILER_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::sgc {

/// Renders every diagnostic of a context to a stream while in scope.
/// Remarks print only when `showRemarks` is set.
class SgcDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  SgcDiagnosticHandler(MLIRContext *ctx, llvm::raw_ostream &os,
                       bool showRemarks);

  /// Number of errors seen so far.
  unsigned getNumErrors() const { return numErrors; }

  /// Renders one location as `file:line:col` (or "" when none is known)
  /// and the names wrapped around it (JSON paths, tensor names).
  static void renderLocation(Location loc, std::string &position,
                             llvm::SmallVectorImpl<std::string> &names);

private:
  void emit(Diagnostic &diag);
  void emitOne(Location loc, llvm::StringRef severity, llvm::StringRef text);

  llvm::raw_ostream &os;
  bool showRemarks;
  unsigned numErrors = 0;
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_DRIVER_DIAGNOSTICS_H
