// RUN: sgc-opt %s -sg-select-kernels | FileCheck %s
// RUN: sgc-opt %s -sg-select-kernels=fuse-row-chains=false | FileCheck %s --check-prefix=UNFUSED
// RUN: sgc-opt %s -sg-select-kernels=device-argmax=false | FileCheck %s --check-prefix=NOARGMAX
// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s --check-prefix=LAUNCH
// Selecting again decides again: no record of the first run survives.
// RUN: sgc-opt %s -sg-select-kernels -sg-select-kernels=fuse-row-chains=false | FileCheck %s --check-prefix=UNFUSED
// sg-select-kernels on a decode plan (one token a call): the family of each
// op, the row chains that projections take into their prologues (in the
// step, and carried into the next step's first projection), the LM head.

// CHECK-LABEL: func.func @embed
// CHECK: sg.embed {{.*}}sg.selected_kernel = #sg.kernel<"embed">
// CHECK-LABEL: func.func @layer
// CHECK: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">{{[,}]}}
// The layer's q and k (and v's cache write) in one launch.
// CHECK: sg.norm_rope {{.*}}sg.selected_kernel = #sg.kernel<"qknorm_rope_append">
// CHECK: sg.norm_rope {{.*}}sg.selected_kernel = #sg.kernel<"fused">
// CHECK: sg.full_attn {{.*}}sg.selected_kernel = #sg.kernel<"attn_decode_splitk">
// CHECK: sg.kv_write {{.*}}sg.selected_kernel = #sg.kernel<"fused">
// CHECK: sg.linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">{{[,}]}}
// The residual add runs in the prologue of gate/up, the layer's last add in
// the next step's first projection.
// CHECK: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"prologue">
// CHECK: sg.gated_mlp {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows", {prologue = "chain"}>
// CHECK: sg.linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">{{[,}]}}
// CHECK: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"carried">
// CHECK-LABEL: func.func @head
// CHECK: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows", {lm_head}>
// After the embedding no chain is carried; after each layer one is.
// CHECK: plan.call @embed
// CHECK-NOT: sg.carried_prologue
// CHECK: plan.call @layer
// CHECK-NOT: sg.carried_prologue
// CHECK-SAME: layer = 0
// CHECK: plan.call @layer({{.*}}layer = 1 : i64, sg.carried_prologue}
// CHECK: plan.call @head({{.*}}{sg.carried_prologue}

// UNFUSED: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"row_chain">
// UNFUSED: sg.gated_mlp {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">{{[,}]}}
// UNFUSED: sg.add {{.*}}sg.selected_kernel = #sg.kernel<"row_chain">
// UNFUSED-NOT: carried

// NOARGMAX-LABEL: func.func @head
// NOARGMAX: sg.norm_linear {{.*}}sg.selected_kernel = #sg.kernel<"gemv_rows">{{[,}]}}

// The launches follow the records: a layer's projections take the chains
// (gate/up reads the add's inputs; the second layer's QKV and the LM head
// read the carried add's), and the LM head writes the argmax.
// LAUNCH: plan.launch @sgc_kernels::@embed_0
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_0(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@qknorm_rope_append_0(
// LAUNCH: plan.launch @sgc_kernels::@attn_decode_splitk_0(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_1(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_2(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_1(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_3(
// LAUNCH-NOT: plan.launch
// LAUNCH: plan.launch @sgc_kernels::@qknorm_rope_append_0(
// LAUNCH: plan.launch @sgc_kernels::@gemv_rows_4(
// LAUNCH: plan.return {{.*}} argmax
// LAUNCH: gpu.func @gemv_rows_2(
// LAUNCH-SAME: prologue = ["add"]
// LAUNCH: gpu.func @gemv_rows_3(
// LAUNCH-SAME: prologue = ["add"]
// LAUNCH: gpu.func @gemv_rows_4(
// LAUNCH-SAME: argmax = true
// LAUNCH-SAME: prologue = ["add"]

plan.tensor @e : tensor<128x32xbf16> fill(random)
plan.tensor @n : tensor<32xbf16> fill(random)
plan.tensor @hn : tensor<16xbf16> fill(random)
plan.tensor @wq : tensor<64x32xbf16> fill(random)
plan.tensor @wkv : tensor<32x32xbf16> fill(random)
plan.tensor @wo : tensor<32x64xbf16> fill(random)
plan.tensor @gate : tensor<64x32xbf16> fill(random)
plan.tensor @down : tensor<32x64xbf16> fill(random)
plan.kv_layer @kv0 full layer(0) slots(8) kv_heads(2) head_dim(16, 16) : bf16
plan.kv_layer @kv1 full layer(1) slots(8) kv_heads(2) head_dim(16, 16) : bf16

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x32xbf16>) -> tensor<1x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x32xbf16>, tensor<1xi32>) -> tensor<1x32xbf16>
  return %h : tensor<1x32xbf16>
}

func.func @layer(%x: tensor<1x32xbf16>, %pos: i64, %kc: tensor<8x2x16xbf16>, %vc: tensor<8x2x16xbf16>,
                 %n: tensor<32xbf16>, %wq: tensor<64x32xbf16>, %wk: tensor<32x32xbf16>, %wv: tensor<32x32xbf16>,
                 %hn: tensor<16xbf16>, %wo: tensor<32x64xbf16>, %gate: tensor<64x32xbf16>, %up: tensor<64x32xbf16>,
                 %down: tensor<32x64xbf16>) -> (tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<1x32xbf16>) {
  %qkv:3 = sg.norm_linear %x norm(%n) weights(%wq, %wk, %wv) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<1x32xbf16>, tensor<32xbf16>, tensor<64x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>) -> (tensor<1x64xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16>)
  %qh = sg.split_heads %qkv#0 : tensor<1x64xbf16> -> tensor<1x4x16xbf16>
  %kh = sg.split_heads %qkv#1 : tensor<1x32xbf16> -> tensor<1x2x16xbf16>
  %vh = sg.split_heads %qkv#2 : tensor<1x32xbf16> -> tensor<1x2x16xbf16>
  %q = sg.norm_rope %qh norm(%hn) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<1x4x16xbf16>, tensor<16xbf16>, i64) -> tensor<1x4x16xbf16>
  %k, %kc2 = sg.norm_rope %kh norm(%hn) at %pos into %kc {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<1x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<1x2x16xbf16>, tensor<8x2x16xbf16>)
  %a = sg.full_attn %q, %k, %vh cache(%kc, %vc) at %pos {scale = 0.25 : f64}
      : (tensor<1x4x16xbf16>, tensor<1x2x16xbf16>, tensor<1x2x16xbf16>, tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, i64) -> tensor<1x4x16xbf16>
  %vc2 = sg.kv_write %vh into %vc at %pos : tensor<1x2x16xbf16> into tensor<8x2x16xbf16>
  %m = sg.merge_heads %a : tensor<1x4x16xbf16> -> tensor<1x64xbf16>
  %o = sg.linear %m, %wo : (tensor<1x64xbf16>, tensor<32x64xbf16>) -> tensor<1x32xbf16>
  %r = sg.add %x, %o : tensor<1x32xbf16>
  %g = sg.gated_mlp %r norm(%n) gate(%gate) up(%up) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<1x32xbf16>, tensor<32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> tensor<1x64xbf16>
  %d = sg.linear %g, %down : (tensor<1x64xbf16>, tensor<32x64xbf16>) -> tensor<1x32xbf16>
  %y = sg.add %r, %d : tensor<1x32xbf16>
  return %kc2, %vc2, %y : tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<1x32xbf16>
}

func.func @head(%x: tensor<1x32xbf16>, %n: tensor<32xbf16>, %w: tensor<128x32xbf16>) -> tensor<1x128xbf16> {
  %l = sg.norm_linear %x norm(%n) weights(%w) {eps = 1.0e-6 : f64, weight_offset = 1 : i64}
      : (tensor<1x32xbf16>, tensor<32xbf16>, tensor<128x32xbf16>) -> tensor<1x128xbf16>
  return %l : tensor<1x128xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x32xbf16>
  %n = plan.weight @n : !plan.buffer<32xbf16>
  %hn = plan.weight @hn : !plan.buffer<16xbf16>
  %wq = plan.weight @wq : !plan.buffer<64x32xbf16>
  %wkv = plan.weight @wkv : !plan.buffer<32x32xbf16>
  %wo = plan.weight @wo : !plan.buffer<32x64xbf16>
  %gate = plan.weight @gate : !plan.buffer<64x32xbf16>
  %down = plan.weight @down : !plan.buffer<32x64xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<8x2x16xbf16>
  %v0 = plan.kv_cache @kv0 value : !plan.buffer<8x2x16xbf16>
  %k1 = plan.kv_cache @kv1 key : !plan.buffer<8x2x16xbf16>
  %v1 = plan.kv_cache @kv1 value : !plan.buffer<8x2x16xbf16>
  %x0 = plan.alloc offset(0) : !plan.buffer<1x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x0) : (!plan.buffer<1xi32>, !plan.buffer<128x32xbf16>) -> (!plan.buffer<1x32xbf16>)
  %x1 = plan.alloc offset(64) : !plan.buffer<1x32xbf16>
  plan.call @layer(%x0, %pos, %k0, %v0, %n, %wq, %wkv, %wkv, %hn, %wo, %gate, %gate, %down) -> (%k0, %v0, %x1) {layer = 0 : i64}
      : (!plan.buffer<1x32xbf16>, i64, !plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<32xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<32x32xbf16>, !plan.buffer<32x32xbf16>, !plan.buffer<16xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<32x64xbf16>) -> (!plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<1x32xbf16>)
  %x2 = plan.alloc offset(128) : !plan.buffer<1x32xbf16>
  plan.call @layer(%x1, %pos, %k1, %v1, %n, %wq, %wkv, %wkv, %hn, %wo, %gate, %gate, %down) -> (%k1, %v1, %x2) {layer = 1 : i64}
      : (!plan.buffer<1x32xbf16>, i64, !plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<32xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<32x32xbf16>, !plan.buffer<32x32xbf16>, !plan.buffer<16xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<32x64xbf16>) -> (!plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<1x32xbf16>)
  %l = plan.alloc offset(256) : !plan.buffer<1x128xbf16>
  plan.call @head(%x2, %n, %e) -> (%l) : (!plan.buffer<1x32xbf16>, !plan.buffer<32xbf16>, !plan.buffer<128x32xbf16>) -> (!plan.buffer<1x128xbf16>)
  plan.return %l : !plan.buffer<1x128xbf16>
}
