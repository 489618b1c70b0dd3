// RUN: sgc-opt %s -sg-select-kernels | FileCheck %s
// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s --check-prefix=LAUNCH
// sg-select-kernels on a bf16 prefill plan (64 tokens a call): projections
// and attention on tensor cores, the chunk's cache writes after the
// attention, a row chain in one launch, the LM head's wanted rows.

// CHECK: sg.embed {{.*}}sg.selected_kernel = #sg.kernel<"embed">
// CHECK: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"gemm_mma">
// CHECK: sg.norm_rope {{.*}}sg.selected_kernel = #sg.kernel<"qknorm_rope_append">
// CHECK: sg.norm_rope {{.*}}sg.selected_kernel = #sg.kernel<"fused">
// CHECK: sg.sliding_attn {{.*}}sg.selected_kernel = #sg.kernel<"attn_prefill">
// CHECK: sg.kv_write {{.*}}sg.selected_kernel = #sg.kernel<"kv_write">
// CHECK: sg.linear {{.*}}sg.selected_kernel = #sg.kernel<"gemm_mma">
// CHECK: sg.rms_norm {{.*}}sg.selected_kernel = #sg.kernel<"row_chain">
// CHECK: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"fused">
// CHECK: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"gemm_mma", {lm_head}>
// CHECK-NOT: carried_prologue

// LAUNCH: plan.launch @sgc_kernels::@embed_0
// LAUNCH: plan.launch @sgc_kernels::@gemm_mma_0(
// LAUNCH: plan.launch @sgc_kernels::@qknorm_rope_append_0(
// LAUNCH: plan.launch @sgc_kernels::@attn_prefill_0(
// LAUNCH-NEXT: plan.launch @sgc_kernels::@kv_write_0(
// LAUNCH-NEXT: plan.launch @sgc_kernels::@kv_write_0(
// LAUNCH: plan.launch @sgc_kernels::@gemm_mma_1(
// LAUNCH: plan.launch @sgc_kernels::@row_chain_0(
// LAUNCH: plan.launch @sgc_kernels::@gemm_mma_2(
// LAUNCH: gpu.func @gemm_mma_2(
// LAUNCH-SAME: wanted_rows_only = true

plan.tensor @n : tensor<64xbf16> fill(random)
plan.tensor @hn : tensor<16xbf16> fill(random)
plan.tensor @wq : tensor<64x64xbf16> fill(random)
plan.tensor @wkv : tensor<32x64xbf16> fill(random)
plan.tensor @lm : tensor<128x64xbf16> fill(random)
plan.kv_layer @kv0 ring layer(0) slots(8) kv_heads(2) head_dim(16, 16) : bf16

func.func @embed(%ids: tensor<?xi32>, %t: tensor<128x64xbf16>) -> tensor<?x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x64xbf16>, tensor<?xi32>) -> tensor<?x64xbf16>
  return %h : tensor<?x64xbf16>
}

func.func @layer(%x: tensor<?x64xbf16>, %pos: i64, %kc: tensor<8x2x16xbf16>, %vc: tensor<8x2x16xbf16>,
                 %n: tensor<64xbf16>, %wq: tensor<64x64xbf16>, %wk: tensor<32x64xbf16>, %wv: tensor<32x64xbf16>,
                 %hn: tensor<16xbf16>, %wo: tensor<64x64xbf16>) -> (tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<?x64xbf16>) {
  %qkv:3 = sg.norm_linear %x norm(%n) weights(%wq, %wk, %wv) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x32xbf16>)
  %qh = sg.split_heads %qkv#0 : tensor<?x64xbf16> -> tensor<?x4x16xbf16>
  %kh = sg.split_heads %qkv#1 : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %vh = sg.split_heads %qkv#2 : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %q = sg.norm_rope %qh norm(%hn) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<?x4x16xbf16>, tensor<16xbf16>, i64) -> tensor<?x4x16xbf16>
  %k, %kc2 = sg.norm_rope %kh norm(%hn) at %pos into %kc {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64, window = 8 : i64}
      : (tensor<?x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<?x2x16xbf16>, tensor<8x2x16xbf16>)
  %a = sg.sliding_attn %q, %k, %vh cache(%kc, %vc) at %pos {scale = 0.25 : f64, window = 8 : i64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %vc2 = sg.kv_write %vh into %vc at %pos {window = 8 : i64} : tensor<?x2x16xbf16> into tensor<8x2x16xbf16>
  %m = sg.merge_heads %a : tensor<?x4x16xbf16> -> tensor<?x64xbf16>
  %o = sg.linear %m, %wo : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
  %on = sg.rms_norm %o, %n {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<?x64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16>
  %y = sg.add %x, %on : tensor<?x64xbf16>
  return %kc2, %vc2, %y : tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<?x64xbf16>
}

func.func @head(%x: tensor<?x64xbf16>, %n: tensor<64xbf16>, %w: tensor<128x64xbf16>) -> tensor<?x128xbf16> {
  %l = sg.norm_linear %x norm(%n) weights(%w) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<?x64xbf16>, tensor<64xbf16>, tensor<128x64xbf16>) -> tensor<?x128xbf16>
  return %l : tensor<?x128xbf16>
}

plan.entry @prefill prefill max_tokens(64) workspace(65536) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %n = plan.weight @n : !plan.buffer<64xbf16>
  %hn = plan.weight @hn : !plan.buffer<16xbf16>
  %wq = plan.weight @wq : !plan.buffer<64x64xbf16>
  %wkv = plan.weight @wkv : !plan.buffer<32x64xbf16>
  %head = plan.weight @lm : !plan.buffer<128x64xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<8x2x16xbf16>
  %v0 = plan.kv_cache @kv0 value : !plan.buffer<8x2x16xbf16>
  %x0 = plan.alloc offset(0) : !plan.buffer<?x64xbf16>
  plan.call @embed(%tokens, %head) -> (%x0) : (!plan.buffer<?xi32>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<?x64xbf16>)
  %x1 = plan.alloc offset(8192) : !plan.buffer<?x64xbf16>
  plan.call @layer(%x0, %pos, %k0, %v0, %n, %wq, %wkv, %wkv, %hn, %wq) -> (%k0, %v0, %x1) {layer = 0 : i64}
      : (!plan.buffer<?x64xbf16>, i64, !plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<64xbf16>, !plan.buffer<64x64xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<16xbf16>, !plan.buffer<64x64xbf16>) -> (!plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<?x64xbf16>)
  %l = plan.alloc offset(16384) : !plan.buffer<?x128xbf16>
  plan.call @head(%x1, %n, %head) -> (%l) : (!plan.buffer<?x64xbf16>, !plan.buffer<64xbf16>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<?x128xbf16>)
  plan.return %l : !plan.buffer<?x128xbf16>
}
