// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-fuse-softcap-head | FileCheck %s
// sg.norm_linear has neither a bias nor an [in, out] weight: the fusions
// leave such linears (the vision towers') as they are.

// CHECK-LABEL: func.func @norm_then_biased_linear
// CHECK-NOT: sg.norm_linear
// CHECK: sg.rms_norm
// CHECK: sg.linear %{{.*}}, %{{.*}} bias(%{{.*}})
func.func @norm_then_biased_linear(%x: tensor<4x32xbf16>, %n: tensor<32xbf16>, %w: tensor<64x32xbf16>, %b: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %h = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<4x32xbf16>, tensor<32xbf16>) -> tensor<4x32xbf16>
  %y = sg.linear %h, %w bias(%b) : (tensor<4x32xbf16>, tensor<64x32xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----
// Gemma 3's projector: the soft-embedding norm, then an [in, out] weight.
// CHECK-LABEL: func.func @norm_then_in_out_linear
// CHECK-NOT: sg.norm_linear
// CHECK: sg.linear %{{.*}}, %{{.*}} {weight_layout = "in_out"}
func.func @norm_then_in_out_linear(%x: tensor<4x32xbf16>, %n: tensor<32xbf16>, %w: tensor<32x32xbf16>) -> tensor<4x32xbf16> {
  %h = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<4x32xbf16>, tensor<32xbf16>) -> tensor<4x32xbf16>
  %y = sg.linear %h, %w {weight_layout = "in_out"} : (tensor<4x32xbf16>, tensor<32x32xbf16>) -> tensor<4x32xbf16>
  return %y : tensor<4x32xbf16>
}

// -----
// CHECK-LABEL: func.func @biased_linear_then_softcap
// CHECK-NOT: sg.norm_linear
// CHECK: sg.linear %{{.*}}, %{{.*}} bias(%{{.*}})
// CHECK: sg.softcap
func.func @biased_linear_then_softcap(%x: tensor<4x32xbf16>, %w: tensor<64x32xbf16>, %b: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %y = sg.linear %x, %w bias(%b) : (tensor<4x32xbf16>, tensor<64x32xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  %c = sg.softcap %y {cap = 30.0 : f64} : tensor<4x64xbf16>
  return %c : tensor<4x64xbf16>
}
