// The four fusions as one pattern set (sg-fuse) give the IR the four passes
// give in the pipeline's order, whichever end of each function the pattern
// driver starts from: on the tiny models' graphs after graph-opt (q/k norms
// with RoPE and partial RoPE, Gemma 4's V norm, gated MLPs, the softcapped
// head behind the final norm).
// RUN: rm -rf %t && mkdir -p %t
// RUN: for m in tiny-gemma3 tiny-gemma4; do sgc compile %examples/$m/system_graph.json --compile-to=graph-opt -o %t/$m.mlir || exit 1; done
// RUN: for m in tiny-gemma3 tiny-gemma4; do sgc-opt %t/$m.mlir -sg-fuse-norm-matmul -sg-fuse-qknorm-rope -sg-fuse-gated-mlp -sg-fuse-softcap-head > %t/$m.passes.mlir || exit 1; done
// RUN: for m in tiny-gemma3 tiny-gemma4; do sgc-opt %t/$m.mlir -sg-fuse > %t/$m.set.mlir && sgc-opt %t/$m.mlir '-sg-fuse=top-down=true' > %t/$m.top-down.mlir || exit 1; done
// RUN: for m in tiny-gemma3 tiny-gemma4; do for o in set top-down; do diff -q %t/$m.passes.mlir %t/$m.$o.mlir > /dev/null && echo "$m $o: same"; done; done | FileCheck %s --check-prefix=SAME
// SAME: tiny-gemma3 set: same
// SAME-NEXT: tiny-gemma3 top-down: same
// SAME-NEXT: tiny-gemma4 set: same
// SAME-NEXT: tiny-gemma4 top-down: same

// The fusions did fire: the head is one capped norm_linear, the MLPs gated.
// RUN: FileCheck %s --check-prefix=FUSED < %t/tiny-gemma4.set.mlir
// FUSED-DAG: sg.gated_mlp
// FUSED-DAG: sg.norm_rope
// FUSED-DAG: sg.norm_linear {{.*}}norm({{.*}}softcap = 3.000000e+01
// RUN: not grep -q "sg.softcap" %t/tiny-gemma4.set.mlir
