//===- PlanExplain.h - `sgc explain --plan`: the plan in words --*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_DRIVER_PLANEXPLAIN_H
#define SGC_COMPILER_DRIVER_PLANEXPLAIN_H

#include "compiler/Import/Importer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::sgc {

/// Imports `text` (the contents of `fileName`), runs the phases up to `plan`
/// and prints the plan every target replays: the manifest and KV plan in
/// totals, then per entry point its workspace and each step (the function,
/// what it reads and writes). Fails (printing nothing) when a phase fails.
LogicalResult explainPlan(MLIRContext *ctx, StringRef fileName, StringRef text,
                          const ImportOptions &options, llvm::raw_ostream &os);

/// The same for a graph already parsed (a GGUF's: graphFromGguf).
LogicalResult explainPlan(MLIRContext *ctx, StringRef fileName,
                          const import::GraphSpec &graph,
                          const ImportOptions &options, llvm::raw_ostream &os);

/// The same for an imported module (run to `plan` in place).
LogicalResult explainPlanOf(MLIRContext *ctx, StringRef fileName,
                            ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::sgc

#endif // SGC_COMPILER_DRIVER_PLANEXPLAIN_H
