// The standard MLIR flags work on sgc compile.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: IR Dump After VerifyGraphPass (sg-verify-graph)
// AFTER: IR Dump After Canonicalizer (canonicalize)
// AFTER: IR Dump After CSE (cse)
// AFTER: IR Dump After SpecializePass (sg-specialize)
// AFTER: IR Dump After PlanKVCachePass (sg-plan-kv-cache)
// AFTER: IR Dump After OutlineLayersPass (sg-outline-layers)

// RUN: sgc compile %examples/sg/tiny-decoder.mlir --mlir-print-ir-before=cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// BEFORE: IR Dump Before CSE (cse)
// BEFORE-NOT: IR Dump Before

// RUN: sgc compile %examples/sg/tiny-decoder.mlir --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// TIMING: Execution time report
// TIMING: VerifyGraphPass
// TIMING: Canonicalizer

// RUN: sgc compile %examples/sg/tiny-decoder.mlir --mlir-print-op-generic --compile-to=import | FileCheck %s --check-prefix=GENERIC
// GENERIC: "sg.sliding_attn"
