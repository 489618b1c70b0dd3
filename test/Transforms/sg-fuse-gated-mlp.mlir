// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-fuse-gated-mlp | FileCheck %s
// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-fuse-gated-mlp -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s --check-prefix=LOWERED

// pre_feedforward_layernorm -> gate/up -> gelu_tanh(gate) * up: one op; the
// gelu'd projection is the gate whichever side of the mul it is on.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<?x96xbf16>, %[[N:.*]]: tensor<96xbf16>, %[[WG:.*]]: tensor<192x96xbf16>, %[[WU:.*]]: tensor<192x96xbf16>)
// CHECK: %[[P:.*]] = sg.gated_mlp %[[X]] norm(%[[N]]) gate(%[[WG]]) up(%[[WU]]) {eps = {{.*}} : f64}
// CHECK-NOT: sg.gelu_tanh
// CHECK-NOT: sg.mul
// CHECK: return %[[P]]
// LOWERED-LABEL: func.func @mlp
// LOWERED: call @sgc_rows_96_bf16_b_n0wbf16_
// LOWERED-NEXT: call @sgc_dispatch_gated_mlp_192_192x96_bf16_bf16_dot(
// LOWERED-NOT: call
// The kernel computes gate, up, GELU and the product in one row loop.
// LOWERED: func.func @sgc_gated_mlp_192_192x96
// LOWERED: scf.for
// LOWERED: math.tanh
// LOWERED: arith.mulf
func.func @mlp(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<192x96xbf16>) -> tensor<?x192xbf16> {
  %u = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %g = sg.linear %u, %wg : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %up = sg.linear %u, %wu : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %a = sg.gelu_tanh %g : tensor<?x192xbf16>
  %p = sg.mul %up, %a : tensor<?x192xbf16>
  return %p : tensor<?x192xbf16>
}

// -----
// @negative_gate_used_elsewhere: the gate projection is also returned, so it
// must be materialized.
// CHECK-LABEL: func.func @negative_gate_used_elsewhere
// CHECK: sg.norm_linear
// CHECK: sg.gelu_tanh
// CHECK: sg.mul
// CHECK-NOT: sg.gated_mlp
func.func @negative_gate_used_elsewhere(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<192x96xbf16>) -> (tensor<?x192xbf16>, tensor<?x192xbf16>) {
  %u = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %g = sg.linear %u, %wg : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %up = sg.linear %u, %wu : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %a = sg.gelu_tanh %g : tensor<?x192xbf16>
  %p = sg.mul %a, %up : tensor<?x192xbf16>
  return %p, %g : tensor<?x192xbf16>, tensor<?x192xbf16>
}

// -----
// @negative_projections_of_two_norms: gate and up read different inputs.
// CHECK-LABEL: func.func @negative_projections_of_two_norms
// CHECK-NOT: sg.gated_mlp
func.func @negative_projections_of_two_norms(%x: tensor<?x96xbf16>, %y: tensor<?x96xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<192x96xbf16>) -> tensor<?x192xbf16> {
  %g = sg.linear %x, %wg : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %up = sg.linear %y, %wu : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  %a = sg.gelu_tanh %g : tensor<?x192xbf16>
  %p = sg.mul %a, %up : tensor<?x192xbf16>
  return %p : tensor<?x192xbf16>
}
