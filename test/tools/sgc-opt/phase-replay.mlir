// Every phase is a named pipeline in sgc-opt, so a phase can be replayed on
// a dump: replaying each phase on the driver's last dump of the previous
// phase prints exactly the driver's last dump of that phase (the
// hand-written tiny decoder; phase-replay-graph.test does the same from a
// system graph).
// RUN: rm -rf %t && for p in import graph-opt fusion plan lower codegen; do sgc compile %examples/sg/tiny-decoder.mlir --compile-to=$p --dump-ir-after-each=%t/$p -o /dev/null || exit 1; done
// RUN: prev=import; for p in graph-opt fusion plan lower codegen; do before=$(ls %t/$prev/*.mlir | tail -1); after=$(ls %t/$p/*.mlir | tail -1); sgc-opt $before --sgc-$p > %t/replayed-$p.mlir || exit 1; diff -q %t/replayed-$p.mlir $after > /dev/null && echo "$p: identical"; prev=$p; done > %t/out
// RUN: FileCheck %s --check-prefix=REPLAY < %t/out
// REPLAY: graph-opt: identical
// REPLAY: fusion: identical
// REPLAY: plan: identical
// REPLAY: lower: identical
// REPLAY: codegen: identical

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
// CHECK-DAG: --sg-fuse-norm-matmul
// CHECK-DAG: --sg-fuse-gated-mlp
// CHECK-DAG: --sg-fuse-softcap-head
// CHECK-DAG: --sg-plan-memory
// CHECK-DAG: --sg-select-kernels
// CHECK-DAG: --convert-sg-to-cpu
