//===- Diagnostics.cpp - render diagnostics against the user's file -------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sgc;

SgcDiagnosticHandler::SgcDiagnosticHandler(MLIRContext *ctx,
                                           llvm::raw_ostream &os,
                                           bool showRemarks)
    : ScopedDiagnosticHandler(ctx), os(os), showRemarks(showRemarks) {
  setHandler([this](Diagnostic &diag) {
    emit(diag);
    return success();
  });
}

/// Collects the first file position and every name on the way to it.
static void collect(Location loc, std::string &position,
                    llvm::SmallVectorImpl<std::string> &names) {
  llvm::TypeSwitch<LocationAttr>(loc)
      .Case([&](FileLineColLoc l) {
        if (!position.empty())
          return;
        // Line 0: the file as a whole (a folder, a binary file).
        position = l.getLine() == 0
                       ? l.getFilename().getValue().str()
                       : (l.getFilename().getValue() + ":" +
                          std::to_string(l.getLine()) + ":" +
                          std::to_string(l.getColumn()))
                             .str();
      })
      .Case([&](NameLoc l) {
        names.push_back(l.getName().str());
        collect(l.getChildLoc(), position, names);
      })
      .Case([&](FusedLoc l) {
        for (Location sub : l.getLocations())
          collect(sub, position, names);
      })
      .Case([&](CallSiteLoc l) { collect(l.getCallee(), position, names); })
      .Default([](LocationAttr) {});
}

void SgcDiagnosticHandler::renderLocation(
    Location loc, std::string &position,
    llvm::SmallVectorImpl<std::string> &names) {
  collect(loc, position, names);
}

void SgcDiagnosticHandler::emitOne(Location loc, StringRef severity,
                                   StringRef text) {
  std::string position;
  llvm::SmallVector<std::string> names;
  collect(loc, position, names);
  if (!position.empty())
    os << position << ": ";
  os << severity << ": ";
  for (const std::string &name : names)
    os << "[" << name << "] ";
  os << text << "\n";
}

void SgcDiagnosticHandler::emit(Diagnostic &diag) {
  StringRef severity;
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    severity = "error";
    ++numErrors;
    break;
  case DiagnosticSeverity::Warning:
    severity = "warning";
    break;
  case DiagnosticSeverity::Remark:
    if (!showRemarks)
      return;
    severity = "remark";
    break;
  case DiagnosticSeverity::Note:
    severity = "note";
    break;
  }
  emitOne(diag.getLocation(), severity, diag.str());
  for (Diagnostic &note : diag.getNotes())
    emitOne(note.getLocation(), "note", note.str());
  os.flush();
}
