// `--compile-to=PHASE` stops after PHASE; each phase leaves its mark.
// import: the two references to the tied embedding table are still apart.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=import | FileCheck %s --check-prefix=IMPORT
// IMPORT: func.func @forward
// IMPORT-COUNT-2: sg.weight "model.language_model.embed_tokens.weight"
// IMPORT-NOT: sg.weight "model.language_model.embed_tokens.weight"

// graph-opt: CSE merged them, and sg-specialize made the two variants.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=graph-opt | FileCheck %s --check-prefix=GRAPHOPT
// GRAPHOPT-NOT: func.func @forward
// GRAPHOPT: func.func @prefill
// GRAPHOPT-COUNT-1: sg.weight "model.language_model.embed_tokens.weight"
// GRAPHOPT: func.func @decode
// GRAPHOPT-COUNT-1: sg.weight "model.language_model.embed_tokens.weight"

// plan: the layers are outlined and the variants become plan IR: the
// manifest, the KV plan (a ring of 4 slots), entries whose buffers are
// placed in the workspace.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=plan -o %t.plan.mlir
// RUN: FileCheck %s --check-prefix=PLAN < %t.plan.mlir
// PLAN: plan.tensor @model.language_model.embed_tokens.weight : tensor<512x96xbf16> fill(random)
// PLAN: plan.kv_layer @kv0 ring layer(0) slots(4)
// PLAN: func.func private @prefill_layer0
// PLAN-SAME: sg.body = "layer"
// PLAN: plan.entry @decode decode max_tokens(1) workspace(
// PLAN: plan.alloc offset(0)
// PLAN: plan.call @decode_layer0(
// PLAN: plan.entry @prefill prefill max_tokens(
// PLAN: plan.call @prefill_layer0(
// PLAN-NOT: func.func @decode(
// PLAN-NOT: func.func @prefill(

// lower: the plan stays, the bodies work on buffers and take the execution
// context first.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=lower | FileCheck %s --check-prefix=LOWER
// LOWER-NOT: sg.weight
// LOWER: func.func @decode_layer0(%{{.*}}: !llvm.ptr, %{{.*}}: memref<1x96xbf16>
// LOWER: plan.entry @decode

// codegen and emit (--target=mlir): LLVM dialect.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=codegen | FileCheck %s --check-prefix=LLVM
// RUN: sgc compile %examples/sg/tiny-decoder.mlir | FileCheck %s --check-prefix=LLVM
// LLVM: llvm.func @_mlir_ciface_decode_layer0
// LLVM-NOT: memref<

// Every phase name is accepted.
// RUN: for p in import graph-opt fusion plan lower codegen emit; do sgc compile %examples/sg/tiny-decoder.mlir --compile-to=$p -o /dev/null || exit 1; done

// An unknown phase is a usage error: exit 2, one error line.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=bogus > %t.out 2>&1; echo "exit=$?" >> %t.out
// RUN: FileCheck %s --check-prefix=BAD-PHASE < %t.out
// RUN: grep -c '^error:' %t.out | FileCheck %s --check-prefix=ONE
// BAD-PHASE: error: unknown phase 'bogus' for --compile-to (expected import, graph-opt, fusion, plan, lower, codegen, emit)
// BAD-PHASE: exit=2
// ONE: {{^1$}}
