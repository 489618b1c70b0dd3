// RUN: sgc-opt %s -split-input-file -sg-outline-layers -verify-diagnostics | FileCheck %s

// Three layers: 0 and 2 differ only in weights and share one body; layer 1
// has another geometry (a different rms_norm offset here) and gets its own.
// Weights stay in the caller and become arguments.
// CHECK-LABEL: func.func @decode
// CHECK: %[[E:.*]] = sg.weight "embed"
// CHECK: %[[H0:.*]] = call @decode_embed(%{{.*}}, %[[E]])
// CHECK: %[[W0:.*]] = sg.weight "l0"
// CHECK: %[[H1:.*]] = call @decode_layer0(%[[H0]], %[[W0]]) {sg.layer = 0 : i64}
// CHECK: %[[W1:.*]] = sg.weight "l1"
// CHECK: %[[H2:.*]] = call @decode_layer1(%[[H1]], %[[W1]]) {sg.layer = 1 : i64}
// CHECK: %[[W2:.*]] = sg.weight "l2"
// CHECK: %[[H3:.*]] = call @decode_layer0(%[[H2]], %[[W2]]) {sg.layer = 2 : i64}
// CHECK: %[[L:.*]] = call @decode_head(%[[H3]], %[[E]])
// CHECK: return %[[L]]
// CHECK-LABEL: func.func private @decode_embed
// CHECK-SAME: sg.body = "embed"
// CHECK-LABEL: func.func private @decode_layer0
// CHECK-SAME: sg.body = "layer"
// CHECK-NOT: sg.layer
// CHECK: sg.rms_norm %{{.*}}, %{{.*}} {eps = {{.*}} : f64, weight_offset = 0 : i64}
// CHECK-LABEL: func.func private @decode_layer1
// CHECK: weight_offset = 1 : i64
// CHECK-LABEL: func.func private @decode_head
// CHECK-NOT: func.func private @decode_layer2
func.func @decode(%ids: tensor<1xi32>) -> tensor<1x512xbf16> attributes {sg.variant = "decode"} {
  %e = sg.weight "embed" : tensor<512x96xbf16>
  %h0 = sg.embed %e[%ids] scale(1.0) {sg.block = "embed"} : (tensor<512x96xbf16>, tensor<1xi32>) -> tensor<1x96xbf16>
  %w0 = sg.weight "l0" : tensor<96xbf16>
  %h1 = sg.rms_norm %h0, %w0 {sg.block = "layer", sg.layer = 0 : i64, eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x96xbf16>, tensor<96xbf16>) -> tensor<1x96xbf16>
  %w1 = sg.weight "l1" : tensor<96xbf16>
  %h2 = sg.rms_norm %h1, %w1 {sg.block = "layer", sg.layer = 1 : i64, eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<1x96xbf16>, tensor<96xbf16>) -> tensor<1x96xbf16>
  %w2 = sg.weight "l2" : tensor<96xbf16>
  %h3 = sg.rms_norm %h2, %w2 {sg.block = "layer", sg.layer = 2 : i64, eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x96xbf16>, tensor<96xbf16>) -> tensor<1x96xbf16>
  %l = sg.linear %h3, %e {sg.block = "head"} : (tensor<1x96xbf16>, tensor<512x96xbf16>) -> tensor<1x512xbf16>
  return %l : tensor<1x512xbf16>
}

// -----
// @negative_untagged: an op without a block tag cannot be placed.
func.func @negative_untagged(%x: tensor<1x96xbf16>) -> tensor<1x96xbf16> attributes {sg.variant = "decode"} {
  // expected-error @+1 {{sg-outline-layers: op has no 'sg.block' tag}}
  %y = sg.gelu_tanh %x : tensor<1x96xbf16>
  return %y : tensor<1x96xbf16>
}

// -----
// @negative_not_a_variant: functions without sg.variant are not outlined.
// CHECK-LABEL: func.func @negative_not_a_variant
// CHECK: sg.gelu_tanh
func.func @negative_not_a_variant(%x: tensor<1x96xbf16>) -> tensor<1x96xbf16> {
  %y = sg.gelu_tanh %x {sg.block = "layer", sg.layer = 0 : i64} : tensor<1x96xbf16>
  return %y : tensor<1x96xbf16>
}
