//===- Pipelines.cpp - the named phases of sgc ----------------------------===//
//
// Part of sgc. Phases without passes yet are empty on purpose: the issue
// that fills a phase adds its passes here.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::sgc;

ArrayRef<Phase> mlir::sgc::allPhases() {
  static const Phase phases[] = {Phase::Import, Phase::GraphOpt, Phase::Fusion,
                                 Phase::Plan,   Phase::Lower,    Phase::Codegen,
                                 Phase::Emit};
  return phases;
}

StringRef mlir::sgc::phaseName(Phase phase) {
  switch (phase) {
  case Phase::Import:
    return "import";
  case Phase::GraphOpt:
    return "graph-opt";
  case Phase::Fusion:
    return "fusion";
  case Phase::Plan:
    return "plan";
  case Phase::Lower:
    return "lower";
  case Phase::Codegen:
    return "codegen";
  case Phase::Emit:
    return "emit";
  }
  llvm_unreachable("unknown phase");
}

std::optional<Phase> mlir::sgc::parsePhase(StringRef name) {
  for (Phase phase : allPhases())
    if (phaseName(phase) == name)
      return phase;
  return std::nullopt;
}

void mlir::sgc::buildImportPipeline(OpPassManager &pm) {
  pm.addPass(createVerifyGraphPass());
}

void mlir::sgc::buildGraphOptPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSpecializePass());
}

void mlir::sgc::buildFusionPipeline(OpPassManager &pm) {
  pm.addPass(createFuseNormMatmulPass());
  pm.addPass(createFuseQKNormRopePass());
  pm.addPass(createFuseGatedMLPPass());
  pm.addPass(createFuseSoftcapHeadPass());
}
void mlir::sgc::buildPlanPipeline(OpPassManager &pm) {
  pm.addPass(createPlanKVCachePass());
  pm.addPass(createOutlineLayersPass());
  pm.addPass(createOutlineRowsPass());
  pm.addPass(createExtractPlanPass());
  pm.addPass(createPlanMemoryPass());
}
void mlir::sgc::buildEmitPipeline(OpPassManager &) {}

void mlir::sgc::buildPhasePipeline(Phase phase, OpPassManager &pm,
                                   const Target &target, bool perFunction) {
  switch (phase) {
  case Phase::Import:
    return buildImportPipeline(pm);
  case Phase::GraphOpt:
    return buildGraphOptPipeline(pm);
  case Phase::Fusion:
    return buildFusionPipeline(pm);
  case Phase::Plan:
    return buildPlanPipeline(pm);
  case Phase::Lower:
    return target.buildLowerPipeline(pm);
  case Phase::Codegen:
    return target.buildCodegenPipeline(pm, perFunction);
  case Phase::Emit:
    return buildEmitPipeline(pm);
  }
}

void mlir::sgc::registerPhasePipelines() {
  // The target-specific phases replay the default target's (cpu) passes.
  const Target &target = *allTargets().front();
  for (Phase phase : allPhases()) {
    std::string arg = ("sgc-" + phaseName(phase)).str();
    std::string description =
        ("Run the passes of the sgc '" + phaseName(phase) + "' phase").str();
    PassPipelineRegistration<>(arg, description,
                               [phase, &target](OpPassManager &pm) {
                                 buildPhasePipeline(phase, pm, target);
                               });
  }
}
