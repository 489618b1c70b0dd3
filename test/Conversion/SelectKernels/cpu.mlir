// RUN: sgc-opt %s -split-input-file -verify-diagnostics -sg-select-kernels=target=cpu | FileCheck %s
// RUN: sgc-opt %s -split-input-file -verify-diagnostics -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s --check-prefix=LOWERED
// RUN: not sgc-opt %s -split-input-file -convert-sg-to-cpu 2>&1 | FileCheck %s --check-prefix=UNSELECTED
// sg-select-kernels=target=cpu records each op's CPU family; convert-sg-to-
// linalg lowers what the record names, and refuses an op without one.

// CHECK-LABEL: func.func @layer
// CHECK: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"cpu_projection">
// CHECK: sg.split_heads {{.*}}sg.selected_kernel = #sg.kernel<"cpu_elementwise">
// CHECK: sg.norm_rope {{.*}}sg.selected_kernel = #sg.kernel<"cpu_norm_rope">
// CHECK: sg.full_attn {{.*}}sg.selected_kernel = #sg.kernel<"cpu_attention">
// CHECK: sg.kv_write {{.*}}sg.selected_kernel = #sg.kernel<"cpu_kv_write">
// CHECK: sg.gated_mlp {{.*}}sg.selected_kernel = #sg.kernel<"cpu_projection">
// CHECK: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"cpu_elementwise">
// LOWERED-LABEL: func.func @layer
// LOWERED-NOT: {{= sg\.[a-z_]+ }}
// LOWERED: call @sgc_dispatch_
// UNSELECTED: error: convert-sg-to-cpu: no kernel was selected for this op (sg-select-kernels=target=cpu runs first)
func.func @layer(%x: tensor<?x32xbf16>, %pos: i64, %kc: tensor<8x2x16xbf16>, %vc: tensor<8x2x16xbf16>,
                 %n: tensor<32xbf16>, %wq: tensor<64x32xbf16>, %wk: tensor<32x32xbf16>, %wv: tensor<32x32xbf16>,
                 %hn: tensor<16xbf16>, %gate: tensor<64x32xbf16>, %up: tensor<64x32xbf16>)
    -> (tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<?x64xbf16>) {
  %qkv:3 = sg.norm_linear %x norm(%n) weights(%wq, %wk, %wv) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<?x32xbf16>, tensor<32xbf16>, tensor<64x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x32xbf16>)
  %qh = sg.split_heads %qkv#0 : tensor<?x64xbf16> -> tensor<?x4x16xbf16>
  %kh = sg.split_heads %qkv#1 : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %vh = sg.split_heads %qkv#2 : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %q = sg.norm_rope %qh norm(%hn) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<?x4x16xbf16>, tensor<16xbf16>, i64) -> tensor<?x4x16xbf16>
  %k, %kc2 = sg.norm_rope %kh norm(%hn) at %pos into %kc {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<?x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<?x2x16xbf16>, tensor<8x2x16xbf16>)
  %a = sg.full_attn %q, %k, %vh cache(%kc, %vc) at %pos {scale = 0.25 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %vc2 = sg.kv_write %vh into %vc at %pos : tensor<?x2x16xbf16> into tensor<8x2x16xbf16>
  %m = sg.merge_heads %a : tensor<?x4x16xbf16> -> tensor<?x64xbf16>
  %g = sg.gated_mlp %x norm(%n) gate(%gate) up(%up) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<?x32xbf16>, tensor<32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> tensor<?x64xbf16>
  %y = sg.add %m, %g : tensor<?x64xbf16>
  return %kc2, %vc2, %y : tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<?x64xbf16>
}

// -----

// The vision towers' row ops are the cpu_vision family.
// CHECK-LABEL: func.func @tower_rows
// CHECK: sg.layer_norm {{.*}}sg.selected_kernel = #sg.kernel<"cpu_vision">
// LOWERED-LABEL: func.func @tower_rows
// LOWERED-NOT: {{= sg\.[a-z_]+ }}
func.func @tower_rows(%x: tensor<?x32xbf16>, %w: tensor<32xbf16>, %b: tensor<32xbf16>) -> tensor<?x32xbf16> {
  %y = sg.layer_norm %x, %w, %b {eps = 1.0e-6 : f64} : (tensor<?x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// -----

// A weight inside a body (sg-outline-layers has not run) has no CPU family.
func.func @unoutlined(%x: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{sg-select-kernels: 'sg.weight' has no CPU kernel in a function body (weights must be arguments: run sg-outline-layers first)}}
  %w = sg.weight "w" : tensor<32x32xbf16>
  %y = sg.linear %x, %w : (tensor<?x32xbf16>, tensor<32x32xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}
