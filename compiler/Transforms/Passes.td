//===- Passes.td - sg graph-level passes -------------------*- tablegen -*-===//
//
// Part of sgc. Every pass is listed here with its summary, description and
// options; each lives in its own .cpp file named after the def minus `Pass`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_PASSES_TD
#define SGC_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyGraphPass : Pass<"sg-verify-graph", "mlir::ModuleOp"> {
  let summary = "Check module-level invariants of an imported sg graph";
  let description = [{
    Checks what no single op verifier can see: every checkpoint tensor name
    used by `sg.weight` ops is bound with one type throughout the module,
    since the runtime binds each name once.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

#endif // SGC_COMPILER_TRANSFORMS_PASSES_TD
