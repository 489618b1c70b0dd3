//===- Explain.h - `sgc explain`: what the compiler understood --*- C++ -*-===//
//
// Part of sgc. Lives in the driver, not the importer: it runs the graph-opt
// and fusion phases, which the importer does not depend on.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_DRIVER_EXPLAIN_H
#define SGC_COMPILER_DRIVER_EXPLAIN_H

#include "compiler/Import/Importer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::sgc {

/// Imports `text` (the contents of `fileName`) and prints, per component,
/// its layers grouped by signature and (for the text decoder) the KV cache
/// plan of the imported `@forward` as `sg-plan-kv-cache` computes it; then,
/// per object, the tensor figures derived from the family table next to the
/// declared ones, and every completion applied. Diagnostics go to `ctx` as
/// for a compile; fails (printing nothing) when the import fails.
LogicalResult explainSystemGraph(MLIRContext *ctx, StringRef fileName,
                                 StringRef text, const ImportOptions &options,
                                 llvm::raw_ostream &os);

/// The same for a graph already parsed (a GGUF's: graphFromGguf).
LogicalResult explainGraph(MLIRContext *ctx, StringRef fileName,
                           const import::GraphSpec &graph,
                           const ImportOptions &options,
                           llvm::raw_ostream &os);

} // namespace mlir::sgc

#endif // SGC_COMPILER_DRIVER_EXPLAIN_H
