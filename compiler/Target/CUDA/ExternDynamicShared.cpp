//===- ExternDynamicShared.cpp - dynamic shared memory as an extern -------===//
//
// Part of sgc. See ExternDynamicShared.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/ExternDynamicShared.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace {

struct ExternDynamicSharedPass
    : PassWrapper<ExternDynamicSharedPass, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExternDynamicSharedPass)

  StringRef getArgument() const override {
    return "sgc-extern-dynamic-shared";
  }
  StringRef getDescription() const override {
    return "Give the zero-length shared arrays of gpu.dynamic_shared_memory "
           "external linkage (an extern .shared array in PTX)";
  }
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      // Only the lowering's declarations: shared, zero-length, no value.
      if (!array || array.getNumElements() != 0 ||
          global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          global.getValueOrNull() || global.getInitializerBlock())
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::sgc::createExternDynamicSharedPass() {
  return std::make_unique<ExternDynamicSharedPass>();
}
