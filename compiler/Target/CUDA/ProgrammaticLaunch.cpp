//===- ProgrammaticLaunch.cpp - kernels that may start early --------------===//
//
// Part of sgc. See ProgrammaticLaunch.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/ProgrammaticLaunch.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace {

struct ProgrammaticLaunchPass
    : PassWrapper<ProgrammaticLaunchPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ProgrammaticLaunchPass)

  StringRef getArgument() const override { return "sgc-programmatic-launch"; }
  StringRef getDescription() const override {
    return "Start every GPU kernel with griddepcontrol.wait, so a runtime "
           "may launch it with programmatic stream serialization";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<NVVM::NVVMDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool any = false;
    module.walk([&](gpu::GPUFuncOp fn) {
      if (!fn.isKernel() || fn.getBody().empty())
        return;
      // First in the entry block: no load of another kernel's output, and
      // no store one of them could still read, comes before the wait.
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      NVVM::GriddepcontrolOp::create(b, fn.getLoc(),
                                     NVVM::GridDepActionKind::wait);
      any = true;
    });
    if (any)
      module->setAttr(mlir::sgc::kProgrammaticLaunchAttr,
                      UnitAttr::get(module.getContext()));
  }
};

} // namespace

std::unique_ptr<Pass> mlir::sgc::createProgrammaticLaunchPass() {
  return std::make_unique<ProgrammaticLaunchPass>();
}
