// RUN: sgc-opt %s | FileCheck %s
// RUN: sgc-opt %s | sgc-opt | FileCheck %s
// RUN: sgc-opt %s -mlir-print-op-generic | sgc-opt | FileCheck %s
// Every plan op in its custom form, printed, parsed back and printed again.

// CHECK: plan.tensor @model.embed.weight : tensor<512x96xbf16> fill(random) object("target.embedding") alt ["language_model.embed.weight"]
plan.tensor @"model.embed.weight" : tensor<512x96xbf16> fill(random) object("target.embedding") alt ["language_model.embed.weight"]
// CHECK: plan.tensor @model.norm.weight : tensor<96xbf16> fill(zeros)
plan.tensor @"model.norm.weight" : tensor<96xbf16> fill(zeros)
// CHECK: plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
// CHECK: plan.kv_layer @kv1 full layer(1) slots(512) kv_heads(1) head_dim(64, 64) : bf16 v_from_k
plan.kv_layer @kv1 full layer(1) slots(512) kv_heads(1) head_dim(64, 64) : bf16 v_from_k
// CHECK: plan.kv_layer @kv2 full layer(2) slots(512) kv_heads(1) head_dim(64, 64) : bf16 v_from_k keys_from_values
plan.kv_layer @kv2 full layer(2) slots(512) kv_heads(1) head_dim(64, 64) : bf16 v_from_k keys_from_values

func.func private @body(memref<?xi32>)
func.func private @embed(tensor<?xi32>, tensor<512x96xbf16>) -> tensor<?x96xbf16>
func.func private @layer(tensor<?x96xbf16>, i64, tensor<4x2x16xbf16>, tensor<96xbf16>) -> (tensor<?x96xbf16>, tensor<4x2x16xbf16>)
func.func private @head(tensor<?x96xbf16>, tensor<512x96xbf16>) -> tensor<?x512xbf16>

// CHECK-LABEL: plan.entry @prefill prefill max_tokens(8) workspace(16384) {
// CHECK-NEXT: ^bb0(%[[TOK:tokens]]: !plan.buffer<?xi32>, %[[POS:pos]]: i64):
// CHECK-NEXT: %[[E:.*]] = plan.weight @model.embed.weight : !plan.buffer<512x96xbf16>
// CHECK-NEXT: %[[N:.*]] = plan.weight @model.norm.weight : !plan.buffer<96xbf16>
// CHECK-NEXT: %[[K:.*]] = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
// CHECK-NEXT: %[[H:.*]] = plan.alloc offset(0) : !plan.buffer<?x96xbf16>
// CHECK-NEXT: plan.call @embed(%[[TOK]], %[[E]]) -> (%[[H]]) : (!plan.buffer<?xi32>, !plan.buffer<512x96xbf16>) -> (!plan.buffer<?x96xbf16>)
// CHECK-NEXT: %[[H2:.*]] = plan.alloc offset(1536) : !plan.buffer<?x96xbf16>
// CHECK-NEXT: plan.call @layer(%[[H]], %[[POS]], %[[K]], %[[N]]) -> (%[[H2]], %[[K]]) {layer = 0 : i64}
// CHECK: %[[L:.*]] = plan.alloc offset(3072) : !plan.buffer<?x512xbf16>
// CHECK-NEXT: plan.call @head(%[[H2]], %[[E]]) -> (%[[L]]) {rowwise}
// CHECK-NEXT: plan.return %[[L]] : !plan.buffer<?x512xbf16>
plan.entry @prefill prefill max_tokens(8) workspace(16384) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @"model.embed.weight" : !plan.buffer<512x96xbf16>
  %n = plan.weight @"model.norm.weight" : !plan.buffer<96xbf16>
  %k = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
  %h = plan.alloc offset(0) : !plan.buffer<?x96xbf16>
  plan.call @embed(%tokens, %e) -> (%h) : (!plan.buffer<?xi32>, !plan.buffer<512x96xbf16>) -> (!plan.buffer<?x96xbf16>)
  %h2 = plan.alloc offset(1536) : !plan.buffer<?x96xbf16>
  plan.call @layer(%h, %pos, %k, %n) -> (%h2, %k) {layer = 0 : i64} : (!plan.buffer<?x96xbf16>, i64, !plan.buffer<4x2x16xbf16>, !plan.buffer<96xbf16>) -> (!plan.buffer<?x96xbf16>, !plan.buffer<4x2x16xbf16>)
  %l = plan.alloc offset(3072) : !plan.buffer<?x512xbf16>
  plan.call @head(%h2, %e) -> (%l) {rowwise} : (!plan.buffer<?x96xbf16>, !plan.buffer<512x96xbf16>) -> (!plan.buffer<?x512xbf16>)
  plan.return %l : !plan.buffer<?x512xbf16>
}

// A lowered callee (no results): only its existence is checked. The entry
// also returns the argmax of its logits row.
// CHECK-LABEL: plan.entry @decode decode max_tokens(1) {
// CHECK: %[[L:.*]] = plan.alloc : !plan.buffer<1x512xbf16>
// CHECK-NEXT: %[[A:.*]] = plan.alloc : !plan.buffer<1xi32>
// CHECK-NEXT: plan.call @body(%{{.*}}) -> (%[[L]], %[[A]])
// CHECK-NEXT: plan.return %[[L]] argmax %[[A]] : !plan.buffer<1x512xbf16>, !plan.buffer<1xi32>
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x512xbf16>
  %a = plan.alloc : !plan.buffer<1xi32>
  plan.call @body(%tokens) -> (%l, %a) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x512xbf16>, !plan.buffer<1xi32>)
  plan.return %l argmax %a : !plan.buffer<1x512xbf16>, !plan.buffer<1xi32>
}

// The vision tower's entry: one image's patches and positions in, its soft
// tokens out; the block arguments print under their roles' names.
func.func private @tower(tensor<16x48xf32>, tensor<16x2xi32>) -> tensor<4x96xbf16>
// CHECK-LABEL: plan.entry @encode_image encode_image max_tokens(16) workspace(768) {
// CHECK-NEXT: ^bb0(%[[PX:pixels]]: !plan.buffer<16x48xf32>, %[[PP:patch_pos]]: !plan.buffer<16x2xi32>):
// CHECK-NEXT: %[[S:.*]] = plan.alloc offset(0) : !plan.buffer<4x96xbf16>
// CHECK-NEXT: plan.call @tower(%[[PX]], %[[PP]]) -> (%[[S]])
// CHECK-NEXT: plan.return %[[S]] : !plan.buffer<4x96xbf16>
plan.entry @encode_image encode_image max_tokens(16) workspace(768) {
^bb0(%pixels: !plan.buffer<16x48xf32>, %patch_pos: !plan.buffer<16x2xi32>):
  %s = plan.alloc offset(0) : !plan.buffer<4x96xbf16>
  plan.call @tower(%pixels, %patch_pos) -> (%s) : (!plan.buffer<16x48xf32>, !plan.buffer<16x2xi32>) -> (!plan.buffer<4x96xbf16>)
  plan.return %s : !plan.buffer<4x96xbf16>
}

// A GPU plan: each step launches a kernel of the kernel module on its grid;
// the position goes in as the step state's address. A launch with no dynamic
// shared memory and no token grid dimension prints neither.
gpu.module @kernels {
  gpu.func @embed(%pos: !llvm.ptr, %tokens: memref<?xi32>, %e: memref<512x96xbf16>, %h: memref<?x96xbf16>) kernel {
    gpu.return
  }
  gpu.func @head(%h: memref<?x96xbf16>, %e: memref<512x96xbf16>, %l: memref<1x512xbf16>) kernel {
    gpu.return
  }
}
// CHECK-LABEL: plan.entry @decode_gpu decode max_tokens(1) {
// CHECK: plan.launch @kernels::@embed(%{{.*}}, %{{.*}}, %{{.*}}) -> (%[[H:.*]]) grid [8, 1, 1] block [128, 1, 1] {dynamic_shared = 4096 : i64, layer = 0 : i64, token_grid_dim = 0 : i64} :
// CHECK: plan.launch @kernels::@head(%[[H]], %{{.*}}) -> (%{{.*}}) grid [4, 2, 1] block [256, 1, 1] :
plan.entry @decode_gpu decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @"model.embed.weight" : !plan.buffer<512x96xbf16>
  %h = plan.alloc : !plan.buffer<1x96xbf16>
  plan.launch @kernels::@embed(%pos, %tokens, %e) -> (%h) grid [8, 1, 1] block [128, 1, 1] {dynamic_shared = 4096 : i64, layer = 0 : i64, token_grid_dim = 0 : i64} : (i64, !plan.buffer<1xi32>, !plan.buffer<512x96xbf16>) -> (!plan.buffer<1x96xbf16>)
  %l = plan.alloc : !plan.buffer<1x512xbf16>
  plan.launch @kernels::@head(%h, %e) -> (%l) grid [4, 2, 1] block [256, 1, 1] : (!plan.buffer<1x96xbf16>, !plan.buffer<512x96xbf16>) -> (!plan.buffer<1x512xbf16>)
  plan.return %l : !plan.buffer<1x512xbf16>
}
