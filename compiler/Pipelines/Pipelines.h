//===- Pipelines.h - the named phases of sgc --------------------*- C++ -*-===//
//
// Part of sgc. The compiler is a list of named phases (ARCHITECTURE.md §2):
// import, graph-opt, fusion, plan, lower, codegen, emit. Each phase is a pass
// pipeline built by one function and registered under `sgc-<phase>`, so
// `sgc-opt --sgc-<phase>` replays any phase on a dumped .mlir file.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_PIPELINES_PIPELINES_H
#define SGC_COMPILER_PIPELINES_PIPELINES_H

#include "compiler/Target/Target.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::sgc {

/// The phases, in pipeline order.
enum class Phase { Import, GraphOpt, Fusion, Plan, Lower, Codegen, Emit };

/// All phases in order.
llvm::ArrayRef<Phase> allPhases();

/// The user-facing name of `phase` (`graph-opt`).
llvm::StringRef phaseName(Phase phase);

/// Parses a phase name; std::nullopt if it names none.
std::optional<Phase> parsePhase(llvm::StringRef name);

/// Appends the passes of one target-independent phase to `pm`.
void buildImportPipeline(OpPassManager &pm);
void buildGraphOptPipeline(OpPassManager &pm);
void buildFusionPipeline(OpPassManager &pm);
void buildPlanPipeline(OpPassManager &pm);
void buildEmitPipeline(OpPassManager &pm);

/// Appends the passes of `phase` to `pm`; `lower` and `codegen` are the
/// target's (`perFunction`: see Target::buildCodegenPipeline).
void buildPhasePipeline(Phase phase, OpPassManager &pm, const Target &target,
                        bool perFunction = false);

/// Registers every phase as the named pipeline `sgc-<phase>`.
void registerPhasePipelines();

} // namespace mlir::sgc

#endif // SGC_COMPILER_PIPELINES_PIPELINES_H
