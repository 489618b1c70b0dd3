//===- ExternDynamicShared.cpp - dynamic shared memory as an extern -------===//
//
// Part of sgc. Declared in compiler/Target/Passes.td, which says why.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Passes.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDPASS
#include "compiler/Target/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;

namespace {

struct ExternDynamicSharedPass
    : public sgc::impl::ExternDynamicSharedPassBase<ExternDynamicSharedPass> {
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
