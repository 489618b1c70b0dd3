// `--compile-to=PHASE` stops after PHASE. The graph-opt phase merges the two
// references to the tied embedding table, so the count tells which phases ran.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=import | grep -c 'sg.weight "model.language_model.embed_tokens.weight"' | FileCheck %s --check-prefix=TWO
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=graph-opt --mlir-print-ir-before=sg-specialize -o /dev/null 2>&1 | grep -c 'sg.weight "model.language_model.embed_tokens.weight"' | FileCheck %s --check-prefix=ONE
// After graph-opt, decode and prefill each hold one reference.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir | grep -c 'sg.weight "model.language_model.embed_tokens.weight"' | FileCheck %s --check-prefix=TWO
// TWO: {{^2$}}
// ONE: {{^1$}}

// -o writes the file instead of stdout.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=fusion -o %t.mlir
// RUN: FileCheck %s --check-prefix=FILE < %t.mlir
// FILE: func.func @prefill
// FILE: sg.sliding_attn
// FILE: func.func @decode
// FILE: sg.sliding_attn

// Every phase name is accepted.
// RUN: for p in import graph-opt fusion plan lower codegen emit; do sgc compile %examples/sg/tiny-decoder.mlir --compile-to=$p -o /dev/null || exit 1; done

// An unknown phase is a usage error: exit 2, one error line.
// RUN: sgc compile %examples/sg/tiny-decoder.mlir --compile-to=bogus > %t.out 2>&1; echo "exit=$?" >> %t.out
// RUN: FileCheck %s --check-prefix=BAD-PHASE < %t.out
// RUN: grep -c '^error:' %t.out | FileCheck %s --check-prefix=ONE
// BAD-PHASE: error: unknown phase 'bogus' for --compile-to (expected import, graph-opt, fusion, plan, lower, codegen, emit)
// BAD-PHASE: exit=2
