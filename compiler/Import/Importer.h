//===- Importer.h - system_graph.json (schema 6) -> sg IR -------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_IMPORTER_H
#define SGC_COMPILER_IMPORT_IMPORTER_H

#include "compiler/Import/ComputeDtype.h"
#include "compiler/Import/GraphSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::sgc {

struct ImportOptions {
  /// Follow the graph literally: no family completions; unknown keys are
  /// errors instead of warnings.
  bool strictGraph = false;
  /// The activation dtype of the IR.
  ComputeDtype computeDtype = ComputeDtype::BF16;
  /// Build the image component as `@encode_image`; false for a target that
  /// has no kernels for it yet (it stays one opaque op).
  bool buildVisionTower = true;
  /// Gemma 4: the tower's soft-token budget per image (0: the graph's).
  int64_t maxSoftTokens = 0;
  /// Layers whose V comes from K (Gemma 4's full layers) cache V only and
  /// rebuild the keys they read from it (`keys_from_values`); false keeps
  /// both, for `--kv-keep-keys` or a target without kernels for it yet.
  bool keysFromValues = true;
};

/// Parses and validates `text` (the contents of `fileName`). Every problem is
/// emitted as a diagnostic on `ctx` located at the JSON path (and line:col);
/// parsing stops at the first error. Completions are emitted as remarks.
FailureOr<import::GraphSpec> parseSystemGraph(MLIRContext *ctx,
                                              llvm::StringRef fileName,
                                              llvm::StringRef text,
                                              const ImportOptions &options);

/// Builds the sg module for a validated graph: `@forward` for the text
/// component, `@encode_image` for the image component, one opaque function
/// per other component.
OwningOpRef<ModuleOp> buildModule(MLIRContext *ctx,
                                  const import::GraphSpec &graph,
                                  const ImportOptions &options);

/// buildModule + verification + the check that the IR binds the tensors
/// the family table derives; null on failure (diagnostics emitted).
OwningOpRef<ModuleOp> importGraphSpec(MLIRContext *ctx,
                                      const import::GraphSpec &graph,
                                      const ImportOptions &options);

/// parseSystemGraph + buildModule + verification; null on failure (the
/// diagnostics are already emitted).
OwningOpRef<ModuleOp> importSystemGraph(MLIRContext *ctx,
                                        llvm::StringRef fileName,
                                        llvm::StringRef text,
                                        const ImportOptions &options);

} // namespace mlir::sgc

#endif // SGC_COMPILER_IMPORT_IMPORTER_H
