// RUN: sgc-opt %s -split-input-file -sg-fuse-qknorm-rope | FileCheck %s
// RUN: sgc-opt %s -split-input-file -sg-fuse-qknorm-rope -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s --check-prefix=LOWERED

// A sliding layer of one decode token: q norm + RoPE; k norm + RoPE + the
// ring write; Gemma 4's weightless V norm + its write. Attention keeps
// reading the caches as they were before the chunk.
// CHECK-LABEL: func.func @decode_layer
// CHECK-SAME: (%[[QH:.*]]: tensor<1x4x16xbf16>, %[[KH:.*]]: tensor<1x2x16xbf16>, %[[P:.*]]: i64, %[[OLDK:.*]]: tensor<4x2x16xbf16>, %[[OLDV:.*]]: tensor<4x2x16xbf16>, %[[WQ:.*]]: tensor<16xbf16>, %[[WK:.*]]: tensor<16xbf16>)
// CHECK-DAG: %[[Q:.*]] = sg.norm_rope %[[QH]] norm(%[[WQ]]) at %[[P]] {eps = {{.*}} : f64, sg.block = "layer", sg.layer = 0 : i64, theta = 1.000000e+04 : f64} : (tensor<1x4x16xbf16>, tensor<16xbf16>, i64) -> tensor<1x4x16xbf16>
// CHECK-DAG: %[[K:.*]], %[[KC:.*]] = sg.norm_rope %[[KH]] norm(%[[WK]]) at %[[P]] into %[[OLDK]] {eps = {{.*}} : f64, theta = 1.000000e+04 : f64, window = 4 : i64}
// The V norm reads the raw k heads (V from K) and has no weight and no RoPE.
// CHECK-DAG: %[[V:.*]], %[[VC:.*]] = sg.norm_rope %[[KH]] at %[[P]] into %[[OLDV]] {eps = {{.*}} : f64, window = 4 : i64} : (tensor<1x2x16xbf16>, i64, tensor<4x2x16xbf16>)
// CHECK-NOT: sg.rms_norm
// CHECK-NOT: sg.rope
// CHECK-NOT: sg.kv_write
// CHECK: sg.sliding_attn %[[Q]], %[[K]], %[[V]] cache(%[[OLDK]], %[[OLDV]])
// CHECK: return %{{.*}}, %[[KC]], %[[VC]]
// One token: each fused op is one loop nest (tokens, heads) that also
// stores into the cache; no separate write loop after the attention.
// The caches are updated in place (their results are the arguments 3 and 4),
// never copied out.
// LOWERED-LABEL: func.func @decode_layer
// LOWERED-SAME: sg.result_slots = [-1, 3, 4]
// LOWERED-COUNT-3: math.rsqrt
// LOWERED-NOT: math.rsqrt
// LOWERED: call @sgc_dispatch_attn_w4_{{.*}}(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %arg4, %arg5,
// After the attention nothing is written to the caches, up to the body's
// end (the attention kernel follows it).
// LOWERED-NOT: memref.store %{{.*}}, %arg4[
// LOWERED-NOT: memref.store %{{.*}}, %arg5[
// LOWERED-NOT: linalg.copy
// LOWERED: return
// LOWERED-NEXT: }
// LOWERED-NEXT: func.func @sgc_attn_w4_
func.func @decode_layer(%qh: tensor<1x4x16xbf16>, %kh: tensor<1x2x16xbf16>, %pos: i64, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %wq: tensor<16xbf16>, %wk: tensor<16xbf16>)
    -> (tensor<1x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>) {
  %qn = sg.rms_norm %qh, %wq {sg.block = "layer", sg.layer = 0 : i64, eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x4x16xbf16>, tensor<16xbf16>) -> tensor<1x4x16xbf16>
  %kn = sg.rms_norm %kh, %wk {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x2x16xbf16>, tensor<16xbf16>) -> tensor<1x2x16xbf16>
  %vn = sg.rms_norm %kh {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x2x16xbf16>) -> tensor<1x2x16xbf16>
  %qr = sg.rope %qn at %pos {theta = 1.0e4 : f64} : tensor<1x4x16xbf16>
  %kr = sg.rope %kn at %pos {theta = 1.0e4 : f64} : tensor<1x2x16xbf16>
  %a = sg.sliding_attn %qr, %kr, %vn cache(%kc, %vc) at %pos {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<1x4x16xbf16>, tensor<1x2x16xbf16>, tensor<1x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<1x4x16xbf16>
  %kc2 = sg.kv_write %kr into %kc at %pos {window = 4 : i64} : tensor<1x2x16xbf16> into tensor<4x2x16xbf16>
  %vc2 = sg.kv_write %vn into %vc at %pos {window = 4 : i64} : tensor<1x2x16xbf16> into tensor<4x2x16xbf16>
  return %a, %kc2, %vc2 : tensor<1x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>
}

// -----
// A chunk of several tokens: the ring write waits for the attention, which
// reads the positions the chunk would overwrite.
// LOWERED-LABEL: func.func @prefill_layer
// LOWERED: math.rsqrt
// LOWERED-NOT: memref.store %{{.*}}, %arg4[
// LOWERED: call @sgc_dispatch_attn_w4_{{.*}}(%arg0, %arg1, %{{.*}}, %{{.*}}, %arg4, %arg4,
// LOWERED: memref.store %{{.*}}, %arg4[
// LOWERED: return
// LOWERED-NEXT: }
// CHECK-LABEL: func.func @prefill_layer
// CHECK: sg.norm_rope %{{.*}} norm(%{{.*}}) at %{{.*}} into %{{.*}} {basis = "head_width", {{.*}}rotary_fraction = 2.500000e-01
func.func @prefill_layer(%qh: tensor<?x4x16xbf16>, %kh: tensor<?x2x16xbf16>, %pos: i64, %kc: tensor<4x2x16xbf16>, %wk: tensor<16xbf16>)
    -> (tensor<?x4x16xbf16>, tensor<4x2x16xbf16>) {
  %kn = sg.rms_norm %kh, %wk {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x2x16xbf16>, tensor<16xbf16>) -> tensor<?x2x16xbf16>
  %kr = sg.partial_rope %kn at %pos {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x2x16xbf16>
  %a = sg.sliding_attn %qh, %kr, %kr cache(%kc, %kc) at %pos {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %kc2 = sg.kv_write %kr into %kc at %pos {window = 4 : i64} : tensor<?x2x16xbf16> into tensor<4x2x16xbf16>
  return %a, %kc2 : tensor<?x4x16xbf16>, tensor<4x2x16xbf16>
}

// -----
// @negative_write_at_other_position: the write is at another position than
// the RoPE's; norm and RoPE fuse, the write stays.
// CHECK-LABEL: func.func @negative_write_at_other_position
// CHECK: sg.norm_rope %{{.*}} norm(%{{.*}}) at %{{.*}} {
// CHECK: sg.kv_write
func.func @negative_write_at_other_position(%kh: tensor<1x2x16xbf16>, %pos: i64, %other: i64, %kc: tensor<4x2x16xbf16>, %wk: tensor<16xbf16>) -> tensor<4x2x16xbf16> {
  %kn = sg.rms_norm %kh, %wk {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x2x16xbf16>, tensor<16xbf16>) -> tensor<1x2x16xbf16>
  %kr = sg.rope %kn at %pos {theta = 1.0e4 : f64} : tensor<1x2x16xbf16>
  %kc2 = sg.kv_write %kr into %kc at %other {window = 4 : i64} : tensor<1x2x16xbf16> into tensor<4x2x16xbf16>
  return %kc2 : tensor<4x2x16xbf16>
}

// -----
// @negative_norm_with_other_user: the normalized q is needed unrotated too.
// CHECK-LABEL: func.func @negative_norm_with_other_user
// CHECK: sg.rms_norm
// CHECK: sg.rope
// CHECK-NOT: sg.norm_rope
func.func @negative_norm_with_other_user(%qh: tensor<1x4x16xbf16>, %pos: i64, %wq: tensor<16xbf16>) -> (tensor<1x4x16xbf16>, tensor<1x4x16xbf16>) {
  %qn = sg.rms_norm %qh, %wq {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<1x4x16xbf16>, tensor<16xbf16>) -> tensor<1x4x16xbf16>
  %qr = sg.rope %qn at %pos {theta = 1.0e4 : f64} : tensor<1x4x16xbf16>
  return %qr, %qn : tensor<1x4x16xbf16>, tensor<1x4x16xbf16>
}
