// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-fuse-softcap-head | FileCheck %s
// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-fuse-softcap-head -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s --check-prefix=LOWERED

// Final norm -> tied LM head -> softcap 30: one op with the cap.
// CHECK-LABEL: func.func @head
// CHECK: %[[L:.*]] = sg.norm_linear %{{.*}} norm(%{{.*}}) weights(%{{.*}}) {eps = {{.*}} : f64, softcap = 3.000000e+01 : f64}
// CHECK-NOT: sg.softcap
// CHECK: return %[[L]]
// The cap is the kernel's epilogue: tanh inside the row loop, no separate
// elementwise loop over the logits.
// LOWERED-LABEL: func.func @head
// LOWERED-NOT: linalg.generic
// LOWERED: call @sgc_rows_96_bf16_b_n0wbf16_
// LOWERED: call @sgc_dispatch_linear_512x96_bf16_bf16_dot_cap{{[0-9A-F]+}}(
// LOWERED: func.func @sgc_linear_512x96_bf16_bf16_dot_cap
// LOWERED: math.tanh
func.func @head(%h: tensor<1x96xbf16>, %n: tensor<96xbf16>, %e: tensor<512x96xbf16>) -> tensor<1x512xbf16> {
  %f = sg.rms_norm %h, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x96xbf16>, tensor<96xbf16>) -> tensor<1x96xbf16>
  %l = sg.linear %f, %e : (tensor<1x96xbf16>, tensor<512x96xbf16>) -> tensor<1x512xbf16>
  %c = sg.softcap %l {cap = 30.0 : f64} : tensor<1x512xbf16>
  return %c : tensor<1x512xbf16>
}

// -----
// A plain linear (no norm before it) takes the cap too.
// CHECK-LABEL: func.func @plain_linear
// CHECK: sg.norm_linear %{{.*}} weights(%{{.*}}) {softcap = 3.000000e+01 : f64}
func.func @plain_linear(%h: tensor<1x96xbf16>, %e: tensor<512x96xbf16>) -> tensor<1x512xbf16> {
  %l = sg.linear %h, %e : (tensor<1x96xbf16>, tensor<512x96xbf16>) -> tensor<1x512xbf16>
  %c = sg.softcap %l {cap = 30.0 : f64} : tensor<1x512xbf16>
  return %c : tensor<1x512xbf16>
}

// -----
// @negative_uncapped_logits_used: the uncapped logits are returned too.
// CHECK-LABEL: func.func @negative_uncapped_logits_used
// CHECK: sg.softcap
func.func @negative_uncapped_logits_used(%h: tensor<1x96xbf16>, %e: tensor<512x96xbf16>) -> (tensor<1x512xbf16>, tensor<1x512xbf16>) {
  %l = sg.linear %h, %e : (tensor<1x96xbf16>, tensor<512x96xbf16>) -> tensor<1x512xbf16>
  %c = sg.softcap %l {cap = 30.0 : f64} : tensor<1x512xbf16>
  return %c, %l : tensor<1x512xbf16>, tensor<1x512xbf16>
}
