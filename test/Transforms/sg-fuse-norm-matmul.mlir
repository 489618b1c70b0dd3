// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul | FileCheck %s
// RUN: sgc-opt %s -split-input-file -sg-fuse-norm-matmul -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s --check-prefix=LOWERED

// q/k/v after input_layernorm: one op, the norm's attributes, every weight,
// the block tags kept for outlining.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:.*]]: tensor<?x96xbf16>, %[[N:.*]]: tensor<96xbf16>, %[[WQ:.*]]: tensor<64x96xbf16>, %[[WK:.*]]: tensor<32x96xbf16>, %[[WV:.*]]: tensor<32x96xbf16>)
// CHECK-NOT: sg.rms_norm
// CHECK-NOT: sg.linear
// CHECK: %[[R:.*]]:3 = sg.norm_linear %[[X]] norm(%[[N]]) weights(%[[WQ]], %[[WK]], %[[WV]]) {eps = {{.*}} : f64, sg.block = "layer", sg.layer = 3 : i64, weight_offset = 1 : i64}
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// One fused op is one kernel behind one dispatch; the normalized rows are
// no separate step of the body: the norm is applied while the rows are
// written to the kernel's inputs (@sgc_rows_…_n1w…), f32 and, for the bf16
// tiles, bf16 (_b).
// LOWERED-LABEL: func.func @qkv
// LOWERED-NOT: memref.alloc
// LOWERED: %[[XS:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x96xf32>
// LOWERED-NEXT: %[[XB:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x96xbf16>
// LOWERED-NOT: memref.alloc
// LOWERED: call @sgc_rows_96_bf16_b_n1wbf16_{{[0-9A-F]+}}(%arg1, %arg2, %[[XS]], %[[XB]])
// LOWERED-NEXT: call @sgc_dispatch_linear_64_32_32x96_bf16_bf16_dot(%arg0, %[[XS]], %[[XB]],
// LOWERED-NOT: call
// LOWERED: return
func.func @qkv(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %wq: tensor<64x96xbf16>, %wk: tensor<32x96xbf16>, %wv: tensor<32x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x32xbf16>) {
  %h = sg.rms_norm %x, %n {sg.block = "layer", sg.layer = 3 : i64, eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %q = sg.linear %h, %wq : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  %k = sg.linear %h, %wk : (tensor<?x96xbf16>, tensor<32x96xbf16>) -> tensor<?x32xbf16>
  %v = sg.linear %h, %wv : (tensor<?x96xbf16>, tensor<32x96xbf16>) -> tensor<?x32xbf16>
  return %q, %k, %v : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x32xbf16>
}

// -----
// @negative_non_linear_consumer: the normalized tensor is needed by an add,
// so it must exist; nothing is fused.
// CHECK-LABEL: func.func @negative_non_linear_consumer
// CHECK: sg.rms_norm
// CHECK: sg.linear
// CHECK-NOT: sg.norm_linear
func.func @negative_non_linear_consumer(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %w: tensor<64x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x96xbf16>) {
  %h = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %q = sg.linear %h, %w : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  %r = sg.add %h, %x : tensor<?x96xbf16>
  return %q, %r : tensor<?x64xbf16>, tensor<?x96xbf16>
}

// -----
// @negative_per_head_norm: a q/k norm over [tokens, heads, D] is not a
// linear's input.
// CHECK-LABEL: func.func @negative_per_head_norm
// CHECK: sg.rms_norm
// CHECK-NOT: sg.norm_linear
func.func @negative_per_head_norm(%x: tensor<?x4x16xbf16>, %n: tensor<16xbf16>) -> tensor<?x4x16xbf16> {
  %h = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x4x16xbf16>, tensor<16xbf16>) -> tensor<?x4x16xbf16>
  return %h : tensor<?x4x16xbf16>
}

// -----
// @negative_linear_weight_is_norm: the norm feeds a linear as its weight, not
// as its input.
// CHECK-LABEL: func.func @negative_linear_weight_is_norm
// CHECK: sg.rms_norm
// CHECK-NOT: sg.norm_linear
func.func @negative_linear_weight_is_norm(%x: tensor<1x96xbf16>, %w: tensor<64x96xbf16>) -> tensor<1x64xbf16> {
  %h = sg.rms_norm %w {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<64x96xbf16>) -> tensor<64x96xbf16>
  %y = sg.linear %x, %h : (tensor<1x96xbf16>, tensor<64x96xbf16>) -> tensor<1x64xbf16>
  return %y : tensor<1x64xbf16>
}
