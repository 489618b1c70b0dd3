// RUN: sgc-opt %s | FileCheck %s
// Round trip: parse -> print -> parse -> print gives identical text, in the
// custom and in the generic form.
// RUN: sgc-opt %s > %t.1.mlir && sgc-opt %t.1.mlir > %t.2.mlir && diff %t.1.mlir %t.2.mlir
// RUN: sgc-opt %s -mlir-print-op-generic | sgc-opt > %t.3.mlir && diff %t.1.mlir %t.3.mlir

// Every sg op, in the order a Gemma decoder layer uses them.

// CHECK-LABEL: func.func @weights_and_embed
func.func @weights_and_embed(%ids: tensor<?xi32>) -> tensor<?x96xbf16> {
  // CHECK: %[[T:.*]] = sg.weight "model.language_model.embed_tokens.weight" : tensor<512x96xbf16>
  %table = sg.weight "model.language_model.embed_tokens.weight" : tensor<512x96xbf16>
  // CHECK: sg.embed %[[T]][%{{.*}}] scale(9.812500e+00) : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>
  %h = sg.embed %table[%ids] scale(9.8125) : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>
  return %h : tensor<?x96xbf16>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<?x96xbf16>, %w: tensor<96xbf16>, %v: tensor<?x2x16xbf16>) -> (tensor<?x96xbf16>, tensor<?x2x16xbf16>) {
  // CHECK: sg.rms_norm %{{.*}}, %{{.*}} {eps = 9.9999999747524271E-7 : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %n = sg.rms_norm %x, %w {eps = 9.999999974752427e-07 : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  // The parameter-free V norm of Gemma 4: no weight operand.
  // CHECK: sg.rms_norm %{{.*}} {eps = 9.9999999747524271E-7 : f64, weight_offset = 0 : i64} : (tensor<?x2x16xbf16>) -> tensor<?x2x16xbf16>
  %vn = sg.rms_norm %v {eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x2x16xbf16>) -> tensor<?x2x16xbf16>
  return %n, %vn : tensor<?x96xbf16>, tensor<?x2x16xbf16>
}

// CHECK-LABEL: func.func @projections
func.func @projections(%x: tensor<?x96xf32>, %wq: tensor<64x96xbf16>) -> tensor<?x64xf32> {
  // Mixed dtypes: bf16 weights, f32 activations.
  // CHECK: %[[Q:.*]] = sg.linear %{{.*}}, %{{.*}} : (tensor<?x96xf32>, tensor<64x96xbf16>) -> tensor<?x64xf32>
  %q = sg.linear %x, %wq : (tensor<?x96xf32>, tensor<64x96xbf16>) -> tensor<?x64xf32>
  // CHECK: %[[H:.*]] = sg.split_heads %[[Q]] : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %qh = sg.split_heads %q : tensor<?x64xf32> -> tensor<?x4x16xf32>
  // CHECK: sg.merge_heads %[[H]] : tensor<?x4x16xf32> -> tensor<?x64xf32>
  %m = sg.merge_heads %qh : tensor<?x4x16xf32> -> tensor<?x64xf32>
  return %m : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @ropes
func.func @ropes(%q: tensor<?x4x16xbf16>, %k: tensor<?x1x64xbf16>, %pos: i64) -> (tensor<?x4x16xbf16>, tensor<?x4x16xbf16>, tensor<?x1x64xbf16>) {
  // The default factor 1.0 is elided.
  // CHECK: sg.rope %{{.*}} at %{{.*}} {theta = 1.000000e+04 : f64} : tensor<?x4x16xbf16>
  %a = sg.rope %q at %pos {theta = 1.0e4 : f64, factor = 1.0 : f64} : tensor<?x4x16xbf16>
  // Linear scaling (Gemma 3 full layers).
  // CHECK: sg.rope %{{.*}} at %{{.*}} {factor = 8.000000e+00 : f64, theta = 1.000000e+06 : f64} : tensor<?x4x16xbf16>
  %b = sg.rope %q at %pos {theta = 1.0e6 : f64, factor = 8.0 : f64} : tensor<?x4x16xbf16>
  // CHECK: sg.partial_rope %{{.*}} at %{{.*}} {basis = "head_width", rotary_fraction = 2.500000e-01 : f64, theta = 1.000000e+06 : f64} : tensor<?x1x64xbf16>
  %c = sg.partial_rope %k at %pos {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x1x64xbf16>
  return %a, %b, %c : tensor<?x4x16xbf16>, tensor<?x4x16xbf16>, tensor<?x1x64xbf16>
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>,
                     %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>,
                     %qf: tensor<?x4x64xbf16>, %kf: tensor<?x1x64xbf16>,
                     %kcf: tensor<512x1x64xbf16>, %vcf: tensor<512x1x64xbf16>, %pos: i64)
    -> (tensor<?x4x16xbf16>, tensor<4x2x16xbf16>, tensor<?x4x64xbf16>, tensor<512x1x64xbf16>) {
  // CHECK: sg.sliding_attn %{{.*}}, %{{.*}}, %{{.*}} cache(%{{.*}}, %{{.*}}) at %{{.*}} {scale = 6.250000e-02 : f64, window = 4 : i64} : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 4 : i64, scale = 0.0625 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  // CHECK: sg.kv_write %{{.*}} into %{{.*}} at %{{.*}} {window = 4 : i64} : tensor<?x2x16xbf16> into tensor<4x2x16xbf16>
  %kc2 = sg.kv_write %k into %kc at %pos {window = 4 : i64} : tensor<?x2x16xbf16> into tensor<4x2x16xbf16>
  // CHECK: sg.full_attn %{{.*}}, %{{.*}}, %{{.*}} cache(%{{.*}}, %{{.*}}) at %{{.*}} {scale = 1.000000e+00 : f64, v_from_k} : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  %f = sg.full_attn %qf, %kf, %kf cache(%kcf, %vcf) at %pos {scale = 1.0 : f64, v_from_k}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  // A full cache: no window, slot = position.
  // CHECK: sg.kv_write %{{.*}} into %{{.*}} at %{{.*}} : tensor<?x1x64xbf16> into tensor<512x1x64xbf16>
  %kcf2 = sg.kv_write %kf into %kcf at %pos : tensor<?x1x64xbf16> into tensor<512x1x64xbf16>
  return %a, %kc2, %f, %kcf2 : tensor<?x4x16xbf16>, tensor<4x2x16xbf16>, tensor<?x4x64xbf16>, tensor<512x1x64xbf16>
}

// A V-only cache (K = V): one cache operand twice, keys rebuilt with k_norm's
// weight and the layer's partial RoPE.
// CHECK-LABEL: func.func @keys_from_values
func.func @keys_from_values(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>,
                            %c: tensor<512x1x64xbf16>, %w: tensor<64xbf16>, %pos: i64) -> tensor<?x4x64xbf16> {
  // CHECK: sg.full_attn %{{.*}}, %[[V:[a-z0-9]+]], %[[V]] cache(%[[C:[a-z0-9]+]], %[[C]]) at %{{.*}} keys_from_values(%{{.*}}) {key_basis = "head_width", key_rotary_fraction = 2.500000e-01 : f64, key_theta = 1.000000e+06 : f64, scale = 1.000000e+00 : f64, v_from_k} : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  %f = sg.full_attn %q, %v, %v cache(%c, %c) at %pos keys_from_values(%w)
      {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64, key_rotary_fraction = 0.25 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %f : tensor<?x4x64xbf16>
}

// Image-block ids (prefill with an image): one i32 per query row, after the
// position; absent, the ops print as above.
// CHECK-LABEL: func.func @attention_blocks
func.func @attention_blocks(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>,
                            %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>,
                            %kcf: tensor<512x2x16xbf16>, %vcf: tensor<512x2x16xbf16>,
                            %pos: i64, %blocks: tensor<?xi32>)
    -> (tensor<?x4x16xbf16>, tensor<?x4x16xbf16>) {
  // CHECK: sg.sliding_attn %{{.*}}, %{{.*}}, %{{.*}} cache(%{{.*}}, %{{.*}}) at %{{.*}} blocks(%{{.*}}) {scale = 6.250000e-02 : f64, window = 4 : i64} : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<?xi32>) -> tensor<?x4x16xbf16>
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos blocks(%blocks) {window = 4 : i64, scale = 0.0625 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<?xi32>) -> tensor<?x4x16xbf16>
  // CHECK: sg.full_attn %{{.*}}, %{{.*}}, %{{.*}} cache(%{{.*}}, %{{.*}}) at %{{.*}} blocks(%{{.*}}) {scale = 2.500000e-01 : f64} : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<512x2x16xbf16>, tensor<512x2x16xbf16>, i64, tensor<?xi32>) -> tensor<?x4x16xbf16>
  %f = sg.full_attn %q, %k, %v cache(%kcf, %vcf) at %pos blocks(%blocks) {scale = 0.25 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<512x2x16xbf16>, tensor<512x2x16xbf16>, i64, tensor<?xi32>) -> tensor<?x4x16xbf16>
  return %a, %f : tensor<?x4x16xbf16>, tensor<?x4x16xbf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%g: tensor<?x192xbf16>, %u: tensor<?x192xbf16>, %h: tensor<?x96xbf16>, %s: tensor<1xbf16>) -> (tensor<?x192xbf16>, tensor<?x96xbf16>) {
  // CHECK: %[[G:.*]] = sg.gelu_tanh %{{.*}} : tensor<?x192xbf16>
  %a = sg.gelu_tanh %g : tensor<?x192xbf16>
  // CHECK: sg.mul %[[G]], %{{.*}} : tensor<?x192xbf16>
  %p = sg.mul %a, %u : tensor<?x192xbf16>
  // CHECK: %[[R:.*]] = sg.add %{{.*}}, %{{.*}} : tensor<?x96xbf16>
  %r = sg.add %h, %h : tensor<?x96xbf16>
  // CHECK: %[[L:.*]] = sg.layer_scalar %[[R]], %{{.*}} : tensor<?x96xbf16>, tensor<1xbf16>
  %l = sg.layer_scalar %r, %s : tensor<?x96xbf16>, tensor<1xbf16>
  // CHECK: sg.softcap %[[L]] {cap = 3.000000e+01 : f64} : tensor<?x96xbf16>
  %c = sg.softcap %l {cap = 30.0 : f64} : tensor<?x96xbf16>
  return %p, %c : tensor<?x192xbf16>, tensor<?x96xbf16>
}

// CHECK-LABEL: func.func @fused
func.func @fused(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %wq: tensor<64x96xbf16>, %wk: tensor<32x96xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<192x96xbf16>, %e: tensor<512x96xbf16>)
    -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x192xbf16>, tensor<?x512xbf16>) {
  // CHECK: sg.norm_linear %{{.*}} norm(%{{.*}}) weights(%{{.*}}, %{{.*}}) {eps = {{.*}} : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<64x96xbf16>, tensor<32x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>)
  %q, %k = sg.norm_linear %x norm(%n) weights(%wq, %wk) {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<64x96xbf16>, tensor<32x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>)
  // CHECK: sg.gated_mlp %{{.*}} norm(%{{.*}}) gate(%{{.*}}) up(%{{.*}}) {eps = {{.*}} : f64}
  %p = sg.gated_mlp %x norm(%n) gate(%wg) up(%wu) {eps = 1.0e-6 : f64} : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<192x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  // No norm, with the softcap epilogue.
  // CHECK: sg.norm_linear %{{.*}} weights(%{{.*}}) {softcap = 3.000000e+01 : f64}
  %l = sg.norm_linear %x weights(%e) {softcap = 30.0 : f64} : (tensor<?x96xbf16>, tensor<512x96xbf16>) -> tensor<?x512xbf16>
  return %q, %k, %p, %l : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x192xbf16>, tensor<?x512xbf16>
}

// CHECK-LABEL: func.func @components
func.func @components() {
  // CHECK: sg.opaque_component "vision" {num_layers = 27 : i64, role = "perception"}
  sg.opaque_component "vision" {role = "perception", num_layers = 27 : i64}
  return
}

// The vision towers' ops (gemma-vision.md), at the tiny models' sizes.
// CHECK-LABEL: func.func @siglip
func.func @siglip(%x: tensor<16x32xbf16>, %t: tensor<16x32xbf16>, %w: tensor<32xbf16>, %b: tensor<32xbf16>, %wq: tensor<32x32xbf16>)
    -> (tensor<16x4x8xbf16>, tensor<4x32xbf16>) {
  // CHECK: %[[H:.*]] = sg.add_position_embedding %{{.*}}, %{{.*}} : (tensor<16x32xbf16>, tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %h = sg.add_position_embedding %x, %t : (tensor<16x32xbf16>, tensor<16x32xbf16>) -> tensor<16x32xbf16>
  // CHECK: %[[N:.*]] = sg.layer_norm %[[H]], %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  %n = sg.layer_norm %h, %w, %b {eps = 1.0e-6 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  // CHECK: %[[Q:.*]] = sg.linear %[[N]], %{{.*}} bias(%{{.*}}) : (tensor<16x32xbf16>, tensor<32x32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  %q = sg.linear %n, %wq bias(%b) : (tensor<16x32xbf16>, tensor<32x32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  %qh = sg.split_heads %q : tensor<16x32xbf16> -> tensor<16x4x8xbf16>
  // CHECK: sg.encoder_attn %{{.*}}, %{{.*}}, %{{.*}} {scale = 0.35355339059327379 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16>
  %a = sg.encoder_attn %qh, %qh, %qh {scale = 0.35355339059327379 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16>
  // CHECK: sg.avg_pool_2d %[[N]] {kernel = 2 : i64} : tensor<16x32xbf16> -> tensor<4x32xbf16>
  %p = sg.avg_pool_2d %n {kernel = 2 : i64} : tensor<16x32xbf16> -> tensor<4x32xbf16>
  return %a, %p : tensor<16x4x8xbf16>, tensor<4x32xbf16>
}

// CHECK-LABEL: func.func @gemma4_vision
func.func @gemma4_vision(%pv: tensor<18x48xf32>, %pos: tensor<18x2xi32>, %t: tensor<2x64x32xbf16>, %w: tensor<32x48xbf16>, %sb: tensor<32xbf16>, %ss: tensor<32xbf16>, %wc: tensor<32x3x4x4xbf16>, %wio: tensor<48x32xbf16>)
    -> (tensor<18x2x16xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<18x32xbf16>, tensor<18x32xbf16>) {
  // CHECK: %[[P:.*]] = sg.affine %{{.*}} {scale = 2.000000e+00 : f64, shift = -1.000000e+00 : f64} : (tensor<18x48xf32>) -> tensor<18x48xbf16>
  %p = sg.affine %pv {scale = 2.0 : f64, shift = -1.0 : f64} : (tensor<18x48xf32>) -> tensor<18x48xbf16>
  // A convolution weight [out, 3, 4, 4] used as [out, 48].
  // CHECK: sg.linear %[[P]], %{{.*}} : (tensor<18x48xbf16>, tensor<32x3x4x4xbf16>) -> tensor<18x32xbf16>
  %c = sg.linear %p, %wc : (tensor<18x48xbf16>, tensor<32x3x4x4xbf16>) -> tensor<18x32xbf16>
  // An [in, out] weight.
  // CHECK: sg.linear %[[P]], %{{.*}} {weight_layout = "in_out"} : (tensor<18x48xbf16>, tensor<48x32xbf16>) -> tensor<18x32xbf16>
  %io = sg.linear %p, %wio {weight_layout = "in_out"} : (tensor<18x48xbf16>, tensor<48x32xbf16>) -> tensor<18x32xbf16>
  %e = sg.linear %p, %w : (tensor<18x48xbf16>, tensor<32x48xbf16>) -> tensor<18x32xbf16>
  // CHECK: %[[H:.*]] = sg.add_position_embedding %{{.*}}, %{{.*}} at %{{.*}} : (tensor<18x32xbf16>, tensor<2x64x32xbf16>, tensor<18x2xi32>) -> tensor<18x32xbf16>
  %h = sg.add_position_embedding %e, %t at %pos : (tensor<18x32xbf16>, tensor<2x64x32xbf16>, tensor<18x2xi32>) -> tensor<18x32xbf16>
  %hh = sg.split_heads %h : tensor<18x32xbf16> -> tensor<18x2x16xbf16>
  // CHECK: %[[R:.*]] = sg.axial_rope %{{.*}} at %{{.*}} {theta = 1.000000e+02 : f64} : tensor<18x2x16xbf16>, tensor<18x2xi32>
  %r = sg.axial_rope %hh at %pos {theta = 100.0 : f64} : tensor<18x2x16xbf16>, tensor<18x2xi32>
  // CHECK: sg.encoder_attn %[[R]], %[[R]], %{{.*}} mask(%{{.*}}) {scale = 1.000000e+00 : f64} : (tensor<18x2x16xbf16>, tensor<18x2x16xbf16>, tensor<18x2x16xbf16>, tensor<18x2xi32>) -> tensor<18x2x16xbf16>
  %a = sg.encoder_attn %r, %r, %hh mask(%pos) {scale = 1.0 : f64} : (tensor<18x2x16xbf16>, tensor<18x2x16xbf16>, tensor<18x2x16xbf16>, tensor<18x2xi32>) -> tensor<18x2x16xbf16>
  // CHECK: %[[Y:.*]] = sg.position_pool %[[H]] at %{{.*}} {kernel = 3 : i64} : (tensor<18x32xbf16>, tensor<18x2xi32>) -> tensor<2x32xbf16>
  %y = sg.position_pool %h at %pos {kernel = 3 : i64} : (tensor<18x32xbf16>, tensor<18x2xi32>) -> tensor<2x32xbf16>
  // CHECK: sg.standardize %[[Y]] bias(%{{.*}}) scale(%{{.*}}) {pre_scale = 5.6568542494923806 : f64} : (tensor<2x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  %s = sg.standardize %y bias(%sb) scale(%ss) {pre_scale = 5.656854249492381 : f64} : (tensor<2x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  // CHECK: sg.standardize %[[Y]] {pre_scale = 5.6568542494923806 : f64} : (tensor<2x32xbf16>) -> tensor<2x32xbf16>
  %s2 = sg.standardize %y {pre_scale = 5.656854249492381 : f64} : (tensor<2x32xbf16>) -> tensor<2x32xbf16>
  return %a, %s, %s2, %c, %io : tensor<18x2x16xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<18x32xbf16>, tensor<18x32xbf16>
}

// CHECK-LABEL: func.func @merge_image_rows
// CHECK: sg.merge_image_rows %{{.*}}, %{{.*}} rows(%{{.*}}) : (tensor<?x32xbf16>, tensor<?x32xf32>, tensor<?xi32>) -> tensor<?x32xbf16>
func.func @merge_image_rows(%x: tensor<?x32xbf16>, %e: tensor<?x32xf32>, %b: tensor<?xi32>) -> tensor<?x32xbf16> {
  %m = sg.merge_image_rows %x, %e rows(%b) : (tensor<?x32xbf16>, tensor<?x32xf32>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %m : tensor<?x32xbf16>
}

// Block-encoded weights (`!sg.quant`) round-trip on the projections and the
// embedding.
// CHECK-LABEL: func.func @block_encoded_weights
// CHECK: sg.weight "w" : tensor<64x256x!sg.quant<"Q4_0">>
// CHECK: sg.weight "w2" : tensor<64x256x!sg.quant<"Q4_K">>
// CHECK: sg.embed %{{.*}} : (tensor<64x256x!sg.quant<"Q6_K">>, tensor<?xi32>) -> tensor<?x256xbf16>
// CHECK: sg.linear %{{.*}} : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
// CHECK: sg.linear %{{.*}} : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_K">>) -> tensor<?x64xbf16>
func.func @block_encoded_weights(%t: tensor<64x256x!sg.quant<"Q6_K">>, %ids: tensor<?xi32>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %w = sg.weight "w" : tensor<64x256x!sg.quant<"Q4_0">>
  %w2 = sg.weight "w2" : tensor<64x256x!sg.quant<"Q4_K">>
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<64x256x!sg.quant<"Q6_K">>, tensor<?xi32>) -> tensor<?x256xbf16>
  %y = sg.linear %h, %w : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
  %z = sg.linear %h, %w2 : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_K">>) -> tensor<?x64xbf16>
  return %y, %z : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// CHECK-LABEL: func.func @rows
// CHECK: sg.take_row %{{.*}}[1] : tensor<2x64xbf16> -> tensor<1x64xbf16>
// CHECK: sg.stack_rows %{{.*}}, %{{.*}} : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<2x64xbf16>
func.func @rows(%x: tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  %a = sg.take_row %x[0] : tensor<2x64xbf16> -> tensor<1x64xbf16>
  %b = sg.take_row %x[1] : tensor<2x64xbf16> -> tensor<1x64xbf16>
  %s = sg.stack_rows %b, %a : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<2x64xbf16>
  return %s : tensor<2x64xbf16>
}
