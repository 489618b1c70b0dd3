// RUN: sgc-opt %s --sg-extract-plan | FileCheck %s
// sg-extract-plan turns an outlined variant (weights bound, bodies called)
// into a plan.entry: one plan.tensor per checkpoint tensor in first-use
// order (a tensor referenced twice, as a tied table, once; a norm weight's
// dummy fill is ones), one plan.kv_layer per planned layer, the longest
// planned context on the module; in the entry a plan.kv_cache per cache, a
// plan.weight per sg.weight, a plan.alloc per activation between calls, a
// plan.call per call, and the logits returned. The variant function is
// erased; the bodies stay.

// CHECK: module attributes {plan.context_length = 8 : i64}
// CHECK-NEXT: plan.tensor @embed : tensor<16x8xbf16> fill(random)
// CHECK-NEXT: plan.tensor @norm : tensor<8xbf16> fill(ones)
// CHECK-NEXT: plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(1) head_dim(8, 8) : bf16
// CHECK-NOT: func.func @decode(
// CHECK: func.func private @decode_embed
// CHECK: func.func private @decode_layer0
// CHECK: func.func private @decode_head
// CHECK: plan.entry @decode decode max_tokens(1) {
// CHECK-NEXT: ^bb0(%[[TOKENS:.*]]: !plan.buffer<1xi32>, %[[POS:.*]]: i64):
// CHECK-NEXT: %[[K:.*]] = plan.kv_cache @kv0 key : !plan.buffer<4x1x8xbf16>
// CHECK-NEXT: %[[V:.*]] = plan.kv_cache @kv0 value : !plan.buffer<4x1x8xbf16>
// CHECK-NEXT: %[[E:.*]] = plan.weight @embed : !plan.buffer<16x8xbf16>
// CHECK-NEXT: %[[X0:.*]] = plan.alloc : !plan.buffer<1x8xbf16>
// CHECK-NEXT: plan.call @decode_embed(%[[TOKENS]], %[[E]]) -> (%[[X0]])
// CHECK-NEXT: %[[X1:.*]] = plan.alloc : !plan.buffer<1x8xbf16>
// CHECK-NEXT: plan.call @decode_layer0(%[[X0]], %[[POS]], %[[K]], %[[V]]) -> (%[[K]], %[[V]], %[[X1]]) {layer = 0 : i64}
// CHECK-NEXT: %[[N:.*]] = plan.weight @norm : !plan.buffer<8xbf16>
// CHECK-NEXT: %[[E2:.*]] = plan.weight @embed : !plan.buffer<16x8xbf16>
// CHECK-NEXT: %[[L:.*]] = plan.alloc : !plan.buffer<1x16xbf16>
// CHECK-NEXT: plan.call @decode_head(%[[X1]], %[[N]], %[[E2]]) -> (%[[L]])
// CHECK-NEXT: plan.return %[[L]] : !plan.buffer<1x16xbf16>
module {
  func.func @decode(%tokens: tensor<1xi32>, %pos: i64, %kc: tensor<4x1x8xbf16>, %vc: tensor<4x1x8xbf16>)
      -> (tensor<1x16xbf16>, tensor<4x1x8xbf16>, tensor<4x1x8xbf16>)
      attributes {sg.kv_context_length = 8 : i64,
                  sg.kv_plan = [{bytes_per_token = 32 : i64, head_dim = 8 : i64, kind = "ring", kv_heads = 1 : i64, layer = 0 : i64, slots = 4 : i64, v_head_dim = 8 : i64}],
                  sg.max_tokens = 1 : i64, sg.variant = "decode"} {
    %e = sg.weight "embed" : tensor<16x8xbf16>
    %x0 = call @decode_embed(%tokens, %e) : (tensor<1xi32>, tensor<16x8xbf16>) -> tensor<1x8xbf16>
    %l:3 = call @decode_layer0(%x0, %pos, %kc, %vc) {sg.layer = 0 : i64}
        : (tensor<1x8xbf16>, i64, tensor<4x1x8xbf16>, tensor<4x1x8xbf16>) -> (tensor<4x1x8xbf16>, tensor<4x1x8xbf16>, tensor<1x8xbf16>)
    %n = sg.weight "norm" : tensor<8xbf16>
    %e2 = sg.weight "embed" : tensor<16x8xbf16>
    %logits = call @decode_head(%l#2, %n, %e2) : (tensor<1x8xbf16>, tensor<8xbf16>, tensor<16x8xbf16>) -> tensor<1x16xbf16>
    return %logits, %l#0, %l#1 : tensor<1x16xbf16>, tensor<4x1x8xbf16>, tensor<4x1x8xbf16>
  }
  func.func private @decode_embed(%ids: tensor<1xi32>, %t: tensor<16x8xbf16>) -> tensor<1x8xbf16> attributes {sg.body = "embed"} {
    %h = sg.embed %t[%ids] scale(1.0) : (tensor<16x8xbf16>, tensor<1xi32>) -> tensor<1x8xbf16>
    return %h : tensor<1x8xbf16>
  }
  func.func private @decode_layer0(%x: tensor<1x8xbf16>, %pos: i64, %kc: tensor<4x1x8xbf16>, %vc: tensor<4x1x8xbf16>)
      -> (tensor<4x1x8xbf16>, tensor<4x1x8xbf16>, tensor<1x8xbf16>) attributes {sg.body = "layer"} {
    %h = sg.split_heads %x : tensor<1x8xbf16> -> tensor<1x1x8xbf16>
    %a = sg.sliding_attn %h, %h, %h cache(%kc, %vc) at %pos {window = 4 : i64, scale = 1.0 : f64}
        : (tensor<1x1x8xbf16>, tensor<1x1x8xbf16>, tensor<1x1x8xbf16>, tensor<4x1x8xbf16>, tensor<4x1x8xbf16>, i64) -> tensor<1x1x8xbf16>
    %kc2 = sg.kv_write %h into %kc at %pos {window = 4 : i64} : tensor<1x1x8xbf16> into tensor<4x1x8xbf16>
    %vc2 = sg.kv_write %h into %vc at %pos {window = 4 : i64} : tensor<1x1x8xbf16> into tensor<4x1x8xbf16>
    %m = sg.merge_heads %a : tensor<1x1x8xbf16> -> tensor<1x8xbf16>
    return %kc2, %vc2, %m : tensor<4x1x8xbf16>, tensor<4x1x8xbf16>, tensor<1x8xbf16>
  }
  func.func private @decode_head(%x: tensor<1x8xbf16>, %n: tensor<8xbf16>, %t: tensor<16x8xbf16>) -> tensor<1x16xbf16> attributes {sg.body = "head"} {
    %y = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<1x8xbf16>, tensor<8xbf16>) -> tensor<1x8xbf16>
    %l = sg.linear %y, %t : (tensor<1x8xbf16>, tensor<16x8xbf16>) -> tensor<1x16xbf16>
    return %l : tensor<1x16xbf16>
  }
}
