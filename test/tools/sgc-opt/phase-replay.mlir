// Every phase is a named pipeline in sgc-opt, so a phase can be replayed on
// a dump: replaying graph-opt on the driver's import dump prints exactly the
// driver's graph-opt dump.
// RUN: rm -rf %t && sgc compile %examples/sg/tiny-decoder.mlir --dump-ir-after-each=%t -o /dev/null
// RUN: sgc-opt %t/01-sg-verify-graph.mlir --sgc-graph-opt > %t.replayed.mlir
// RUN: diff %t/04-sg-specialize.mlir %t.replayed.mlir
// RUN: sgc-opt %t/04-sg-specialize.mlir --sgc-fusion --sgc-plan > %t.plan.mlir
// RUN: diff %t/06-sg-outline-layers.mlir %t.plan.mlir

// RUN: sgc-opt --help | FileCheck %s
// CHECK-DAG: --sgc-import
// CHECK-DAG: --sgc-graph-opt
// CHECK-DAG: --sgc-fusion
// CHECK-DAG: --sgc-plan
// CHECK-DAG: --sgc-lower
// CHECK-DAG: --sgc-codegen
// CHECK-DAG: --sgc-emit
// CHECK-DAG: --sg-verify-graph
// CHECK-DAG: --sg-plan-kv-cache
// CHECK-DAG: --sg-specialize
// CHECK-DAG: --sg-outline-layers
