//===- VerifyGraph.cpp - module-level checks of an sg graph ---------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_VERIFYGRAPHPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {
struct VerifyGraphPass
    : public sgc::impl::VerifyGraphPassBase<VerifyGraphPass> {
  void runOnOperation() override {
    llvm::StringMap<sg::WeightOp> firstUse;
    bool ok = true;
    getOperation().walk([&](sg::WeightOp op) {
      auto [it, inserted] = firstUse.try_emplace(op.getName(), op);
      if (inserted || it->second.getType() == op.getType())
        return;
      InFlightDiagnostic diag = op.emitError("checkpoint tensor '")
                                << op.getName() << "' is bound as "
                                << op.getType() << " here and as "
                                << it->second.getType() << " elsewhere";
      diag.attachNote(it->second.getLoc()) << "first bound here";
      ok = false;
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
