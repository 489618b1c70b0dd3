// RUN: sgc-opt %s -split-input-file -sg-specialize="max-prefill-chunk=64" -verify-diagnostics | FileCheck %s

// @forward becomes @prefill (dynamic tokens, at most 64) and @decode (one
// token: every activation's token dimension is 1, linears are GEMVs).
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: (%{{.*}}: tensor<?xi32>, %{{.*}}: i64) -> tensor<?x64xbf16>
// CHECK-SAME: sg.max_tokens = 64 : i64, sg.variant = "prefill"
// CHECK: sg.linear %{{.*}}, %{{.*}} : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%{{.*}}: tensor<1xi32>, %{{.*}}: i64) -> tensor<1x64xbf16>
// CHECK-SAME: sg.max_tokens = 1 : i64, sg.variant = "decode"
// CHECK: sg.embed %{{.*}}[%{{.*}}] scale(1.000000e+00) : (tensor<512x96xbf16>, tensor<1xi32>) -> tensor<1x96xbf16>
// CHECK: sg.linear %{{.*}}, %{{.*}} : (tensor<1x96xbf16>, tensor<64x96xbf16>) -> tensor<1x64xbf16>
// CHECK-NOT: func.func @forward
func.func @forward(%ids: tensor<?xi32>, %pos: i64) -> tensor<?x64xbf16> {
  %t = sg.weight "embed" : tensor<512x96xbf16>
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>
  %w = sg.weight "w" : tensor<64x96xbf16>
  %y = sg.linear %h, %w : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// @negative_no_forward: a module without @forward is left alone.
// CHECK-LABEL: func.func @negative_no_forward
// CHECK-NOT: sg.variant
func.func @negative_no_forward(%x: tensor<?x96xbf16>) -> tensor<?x96xbf16> {
  return %x : tensor<?x96xbf16>
}

// -----
// A model with an image component (`sg.image` on the module): @forward ends
// with the rows' soft tokens and image blocks. Prefill keeps the merge and
// the blocks; decode (causal, never an image row) loses both, and the two
// inputs with them.
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: (%{{.*}}: tensor<?xi32>, %{{.*}}: i64, %{{.*}}: tensor<4x2x16xbf16>, %{{.*}}: tensor<?x32xf32>, %[[B:.*]]: tensor<?xi32>)
// CHECK: sg.merge_image_rows
// CHECK: sg.sliding_attn {{.*}} blocks(%[[B]])
// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%{{.*}}: tensor<1xi32>, %{{.*}}: i64, %{{.*}}: tensor<4x2x16xbf16>) -> tensor<1x2x16xbf16>
// CHECK-NOT: sg.merge_image_rows
// CHECK-NOT: blocks(
// CHECK: return
module attributes {sg.image = {image_token_id = 9 : i64}} {
func.func @forward(%ids: tensor<?xi32>, %pos: i64, %kc: tensor<4x2x16xbf16>, %soft: tensor<?x32xf32>, %blocks: tensor<?xi32>) -> tensor<?x2x16xbf16> {
  %t = sg.weight "embed" : tensor<512x32xbf16>
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  %m = sg.merge_image_rows %h, %soft rows(%blocks) : (tensor<?x32xbf16>, tensor<?x32xf32>, tensor<?xi32>) -> tensor<?x32xbf16>
  %q = sg.split_heads %m : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %a = sg.sliding_attn %q, %q, %q cache(%kc, %kc) at %pos blocks(%blocks) {window = 4 : i64, scale = 0.25 : f64} : (tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<?xi32>) -> tensor<?x2x16xbf16>
  return %a : tensor<?x2x16xbf16>
}
}
