// `--dump-ir-after-each=DIR` writes the input and then the IR after every
// pass, numbered in execution order.
// RUN: rm -rf %t && sgc compile %examples/sg/tiny-decoder.mlir --dump-ir-after-each=%t -o /dev/null
// RUN: ls %t | FileCheck %s
// CHECK: 00-input.mlir
// CHECK-NEXT: 01-sg-verify-graph.mlir
// CHECK-NEXT: 02-canonicalize.mlir
// CHECK-NEXT: 03-cse.mlir
// CHECK-NEXT: 04-sg-specialize.mlir
// CHECK-NEXT: 05-sg-fuse-norm-matmul.mlir
// CHECK-NEXT: 06-sg-fuse-qknorm-rope.mlir
// CHECK-NEXT: 07-sg-fuse-gated-mlp.mlir
// CHECK-NEXT: 08-sg-fuse-softcap-head.mlir
// CHECK-NEXT: 09-sg-plan-kv-cache.mlir
// CHECK-NEXT: 10-sg-outline-layers.mlir
// CHECK-NEXT: 11-sg-outline-rows.mlir
// CHECK-NEXT: 12-sg-extract-plan.mlir
// CHECK-NEXT: 13-sg-plan-memory.mlir
// CHECK-NEXT: 14-sg-select-kernels.mlir
// CHECK-NEXT: 15-convert-sg-to-cpu.mlir
// CHECK-NEXT: 16-convert-linalg-to-loops.mlir
// CHECK:      19-sgc-approximate-math.mlir
// CHECK:      23-sgc-expand-bf16-rounding.mlir
// CHECK:      33-canonicalize.mlir
// CHECK-NOT:  34-

// Each dump is a whole module that sgc-opt parses again, and the last dump is
// the compiler's output.
// RUN: sgc-opt %t/02-canonicalize.mlir -o /dev/null
// RUN: sgc compile %examples/sg/tiny-decoder.mlir -o %t.final.mlir
// RUN: diff %t/33-canonicalize.mlir %t.final.mlir

// Stopping early dumps only the phases that ran.
// RUN: rm -rf %t.import && sgc compile %examples/sg/tiny-decoder.mlir --compile-to=import --dump-ir-after-each=%t.import -o /dev/null
// RUN: ls %t.import | FileCheck %s --check-prefix=IMPORT
// IMPORT: 00-input.mlir
// IMPORT-NEXT: 01-sg-verify-graph.mlir
// IMPORT-NOT: canonicalize

// A dump directory that cannot be created is an error naming it.
// RUN: touch %t.file
// RUN: not sgc compile %examples/sg/tiny-decoder.mlir --dump-ir-after-each=%t.file/sub -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: error: cannot create '{{.*}}.file/sub'
