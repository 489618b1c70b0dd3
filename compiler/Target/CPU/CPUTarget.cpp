//===- CPUTarget.cpp - the CPU target's pipelines and emitter -------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPUTarget.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Target/CPU/CPULibrary.h"
#include "compiler/Target/Host/HostPipeline.h"

using namespace mlir;
using namespace mlir::sgc;

namespace {

class CPUTarget final : public Target {
public:
  StringRef getName() const override { return "cpu"; }
  StringRef getDescription() const override {
    return "a model .so for the host CPU and an x86-64-v3 baseline";
  }
  bool lowersVisionTower() const override { return true; }
  bool lowersDecodeBatch() const override { return true; }

  void buildLowerPipeline(OpPassManager &pm) const override {
    SelectKernelsPassOptions select;
    select.target = "cpu";
    pm.addPass(createSelectKernelsPass(select));
    pm.addPass(createConvertSGToCPUPass());
  }

  void buildCodegenPipeline(OpPassManager &pm,
                            bool perFunction) const override {
    buildHostCodegenPipeline(pm, /*barePointers=*/false, perFunction);
  }

  EmitResult emit(ModuleOp module, const EmitOptions &options) const override {
    return emitCPULibrary(module, options);
  }
};

} // namespace

const Target &mlir::sgc::getCPUTarget() {
  static const CPUTarget target;
  return target;
}
