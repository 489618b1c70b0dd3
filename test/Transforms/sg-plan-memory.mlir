// RUN: sgc-opt %s -sg-plan-memory | FileCheck %s

// A chain of four steps: t0 = a(tokens), t1 = b(t0), t2 = c(t1), the logits
// t3 = d(t2). A step never writes over what it reads, so t1 sits next to t0;
// t2 reuses t0's bytes (t0 is dead after step 1) and t3 reuses t1's. With
// max_tokens 4: t0..t2 are 4 x 96 x 2 = 768 B, t3 4 x 512 x 2 = 4096 B.
// CHECK: sg.plan = {
// CHECK-SAME: offsets = [0, 768, 0, 768]
// CHECK-SAME: workspace_bytes = 4864 : i64
// CHECK-SAME: workspace_bytes = 4864 : i64
module attributes {sg.plan = {variants = {prefill = {
    logits = "t3", max_tokens = 4 : i64,
    steps = [{args = ["tokens"], callee = @a, results = ["t0"]},
             {args = ["t0"], callee = @b, results = ["t1"]},
             {args = ["t1"], callee = @c, results = ["t2"]},
             {args = ["t2"], callee = @d, results = ["t3"]}],
    temps = [tensor<?x96xbf16>, tensor<?x96xbf16>, tensor<?x96xbf16>, tensor<?x512xbf16>]}}}} {
}
