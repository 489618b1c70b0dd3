// RUN: sgc-opt %s -sg-select-kernels | FileCheck %s
// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s --check-prefix=LAUNCH
// Decode attention with 8 bf16 q heads a kv head and head dim 128 computes
// its parts on tensor cores; kv_write ops that no head-jobs launch takes
// are launches of their own.

// CHECK: sg.linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">
// CHECK: sg.full_attn {{.*}}sg.selected_kernel = #sg.kernel<"attn_decode_mma">
// CHECK: sg.kv_write {{.*}}sg.selected_kernel = #sg.kernel<"kv_write">
// CHECK: sg.kv_write {{.*}}sg.selected_kernel = #sg.kernel<"kv_write">

// LAUNCH: plan.launch @sgc_kernels::@attn_decode_mma_0(
// LAUNCH: gpu.func @attn_decode_mma_0(
// LAUNCH-SAME: mma = true

plan.tensor @e : tensor<128x1024xbf16> fill(random)
plan.tensor @wkv : tensor<128x1024xbf16> fill(random)
plan.tensor @wo : tensor<1024x1024xbf16> fill(random)
plan.kv_layer @kv0 full layer(0) slots(16) kv_heads(1) head_dim(128, 128) : bf16

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x1024xbf16>) -> tensor<1x1024xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x1024xbf16>, tensor<1xi32>) -> tensor<1x1024xbf16>
  return %h : tensor<1x1024xbf16>
}

func.func @layer(%x: tensor<1x1024xbf16>, %pos: i64, %kc: tensor<16x1x128xbf16>, %vc: tensor<16x1x128xbf16>,
                 %wkv: tensor<128x1024xbf16>, %wo: tensor<1024x1024xbf16>) -> (tensor<16x1x128xbf16>, tensor<16x1x128xbf16>, tensor<1x1024xbf16>) {
  %k = sg.linear %x, %wkv : (tensor<1x1024xbf16>, tensor<128x1024xbf16>) -> tensor<1x128xbf16>
  %qh = sg.split_heads %x : tensor<1x1024xbf16> -> tensor<1x8x128xbf16>
  %kh = sg.split_heads %k : tensor<1x128xbf16> -> tensor<1x1x128xbf16>
  %a = sg.full_attn %qh, %kh, %kh cache(%kc, %vc) at %pos {scale = 0.125 : f64}
      : (tensor<1x8x128xbf16>, tensor<1x1x128xbf16>, tensor<1x1x128xbf16>, tensor<16x1x128xbf16>, tensor<16x1x128xbf16>, i64) -> tensor<1x8x128xbf16>
  %kc2 = sg.kv_write %kh into %kc at %pos : tensor<1x1x128xbf16> into tensor<16x1x128xbf16>
  %vc2 = sg.kv_write %kh into %vc at %pos : tensor<1x1x128xbf16> into tensor<16x1x128xbf16>
  %m = sg.merge_heads %a : tensor<1x8x128xbf16> -> tensor<1x1024xbf16>
  %o = sg.linear %m, %wo : (tensor<1x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1x1024xbf16>
  return %kc2, %vc2, %o : tensor<16x1x128xbf16>, tensor<16x1x128xbf16>, tensor<1x1024xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(8192) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x1024xbf16>
  %wkv = plan.weight @wkv : !plan.buffer<128x1024xbf16>
  %wo = plan.weight @wo : !plan.buffer<1024x1024xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<16x1x128xbf16>
  %v0 = plan.kv_cache @kv0 value : !plan.buffer<16x1x128xbf16>
  %x0 = plan.alloc offset(0) : !plan.buffer<1x1024xbf16>
  plan.call @embed(%tokens, %e) -> (%x0) : (!plan.buffer<1xi32>, !plan.buffer<128x1024xbf16>) -> (!plan.buffer<1x1024xbf16>)
  %x1 = plan.alloc offset(2048) : !plan.buffer<1x1024xbf16>
  plan.call @layer(%x0, %pos, %k0, %v0, %wkv, %wo) -> (%k0, %v0, %x1) {layer = 0 : i64}
      : (!plan.buffer<1x1024xbf16>, i64, !plan.buffer<16x1x128xbf16>, !plan.buffer<16x1x128xbf16>, !plan.buffer<128x1024xbf16>, !plan.buffer<1024x1024xbf16>) -> (!plan.buffer<16x1x128xbf16>, !plan.buffer<16x1x128xbf16>, !plan.buffer<1x1024xbf16>)
  plan.return %x1 : !plan.buffer<1x1024xbf16>
}
