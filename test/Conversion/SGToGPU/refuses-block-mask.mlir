// RUN: not sgc-opt %s -split-input-file -sg-select-kernels -convert-sg-to-gpu 2>&1 | FileCheck %s
// The CUDA attention kernel is causal only: an attention op with image-block
// ids (a prefill with an image) is refused by name when kernels are
// selected, not run unmasked. (The prompt's token ids stand in for the block
// ids here.)

plan.tensor @e : tensor<512x32xbf16> fill(random)
plan.tensor @kc : tensor<4x4x8xbf16> fill(random)

func.func @embed(%ids: tensor<?xi32>, %t: tensor<512x32xbf16>) -> tensor<?x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %h : tensor<?x32xbf16>
}

func.func @body(%x: tensor<?x32xbf16>, %kc: tensor<4x4x8xbf16>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x32xbf16> {
  %q = sg.split_heads %x : tensor<?x32xbf16> -> tensor<?x4x8xbf16>
  // CHECK: error: sg-select-kernels: 'sg.sliding_attn' with image-block ids (blocks) has no CUDA kernel yet
  %a = sg.sliding_attn %q, %q, %q cache(%kc, %kc) at %pos blocks(%blocks) {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x8xbf16>, tensor<?x4x8xbf16>, tensor<?x4x8xbf16>, tensor<4x4x8xbf16>, tensor<4x4x8xbf16>, i64, tensor<?xi32>) -> tensor<?x4x8xbf16>
  %m = sg.merge_heads %a : tensor<?x4x8xbf16> -> tensor<?x32xbf16>
  return %m : tensor<?x32xbf16>
}

plan.entry @prefill prefill max_tokens(8) workspace(4096) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x32xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<512x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  %kc = plan.weight @kc : !plan.buffer<4x4x8xbf16>
  %y = plan.alloc offset(1024) : !plan.buffer<?x32xbf16>
  plan.call @body(%x, %kc, %pos, %tokens) -> (%y) : (!plan.buffer<?x32xbf16>, !plan.buffer<4x4x8xbf16>, i64, !plan.buffer<?xi32>) -> (!plan.buffer<?x32xbf16>)
  plan.return %y : !plan.buffer<?x32xbf16>
}

// -----

plan.tensor @e : tensor<512x32xbf16> fill(random)
plan.tensor @kc : tensor<4x4x8xbf16> fill(random)

func.func @embed(%ids: tensor<?xi32>, %t: tensor<512x32xbf16>) -> tensor<?x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %h : tensor<?x32xbf16>
}

func.func @body(%x: tensor<?x32xbf16>, %kc: tensor<4x4x8xbf16>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x32xbf16> {
  %q = sg.split_heads %x : tensor<?x32xbf16> -> tensor<?x4x8xbf16>
  // CHECK: error: sg-select-kernels: 'sg.full_attn' with image-block ids (blocks) has no CUDA kernel yet
  %a = sg.full_attn %q, %q, %q cache(%kc, %kc) at %pos blocks(%blocks) {scale = 1.0 : f64}
      : (tensor<?x4x8xbf16>, tensor<?x4x8xbf16>, tensor<?x4x8xbf16>, tensor<4x4x8xbf16>, tensor<4x4x8xbf16>, i64, tensor<?xi32>) -> tensor<?x4x8xbf16>
  %m = sg.merge_heads %a : tensor<?x4x8xbf16> -> tensor<?x32xbf16>
  return %m : tensor<?x32xbf16>
}

plan.entry @prefill prefill max_tokens(8) workspace(4096) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x32xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<512x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  %kc = plan.weight @kc : !plan.buffer<4x4x8xbf16>
  %y = plan.alloc offset(1024) : !plan.buffer<?x32xbf16>
  plan.call @body(%x, %kc, %pos, %tokens) -> (%y) : (!plan.buffer<?x32xbf16>, !plan.buffer<4x4x8xbf16>, i64, !plan.buffer<?xi32>) -> (!plan.buffer<?x32xbf16>)
  plan.return %y : !plan.buffer<?x32xbf16>
}
// CHECK-NOT: convert-sg-to-gpu
