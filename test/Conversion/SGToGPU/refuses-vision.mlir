// RUN: not sgc-opt %s -split-input-file -sg-select-kernels -convert-sg-to-gpu 2>&1 | FileCheck %s
// The CUDA backend has no kernels for the vision towers' forms of sg.linear
// yet: it refuses them by name instead of running the bias-free kernel.

plan.tensor @e : tensor<512x32xbf16> fill(random)
plan.tensor @w : tensor<64x32xbf16> fill(random)
plan.tensor @b : tensor<64xbf16> fill(random)

func.func @embed(%ids: tensor<?xi32>, %t: tensor<512x32xbf16>) -> tensor<?x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %h : tensor<?x32xbf16>
}

func.func @body(%x: tensor<?x32xbf16>, %w: tensor<64x32xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
  // CHECK: error: sg-select-kernels: 'sg.linear' with a bias, an [in, out] or a rank > 2 weight has no CUDA kernel yet
  %y = sg.linear %x, %w bias(%b) : (tensor<?x32xbf16>, tensor<64x32xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

plan.entry @prefill prefill max_tokens(8) workspace(4096) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x32xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<512x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  %w = plan.weight @w : !plan.buffer<64x32xbf16>
  %b = plan.weight @b : !plan.buffer<64xbf16>
  %y = plan.alloc offset(1024) : !plan.buffer<?x64xbf16>
  plan.call @body(%x, %w, %b) -> (%y) : (!plan.buffer<?x32xbf16>, !plan.buffer<64x32xbf16>, !plan.buffer<64xbf16>) -> (!plan.buffer<?x64xbf16>)
  plan.return %y : !plan.buffer<?x64xbf16>
}

// -----

plan.tensor @e : tensor<512x32xbf16> fill(random)
plan.tensor @w : tensor<32x64xbf16> fill(random)

func.func @embed(%ids: tensor<?xi32>, %t: tensor<512x32xbf16>) -> tensor<?x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %h : tensor<?x32xbf16>
}

func.func @body(%x: tensor<?x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x64xbf16> {
  // CHECK: error: sg-select-kernels: 'sg.linear' with a bias, an [in, out] or a rank > 2 weight has no CUDA kernel yet
  %y = sg.linear %x, %w {weight_layout = "in_out"} : (tensor<?x32xbf16>, tensor<32x64xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

plan.entry @prefill prefill max_tokens(8) workspace(4096) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x32xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<512x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  %w = plan.weight @w : !plan.buffer<32x64xbf16>
  %y = plan.alloc offset(1024) : !plan.buffer<?x64xbf16>
  plan.call @body(%x, %w) -> (%y) : (!plan.buffer<?x32xbf16>, !plan.buffer<32x64xbf16>) -> (!plan.buffer<?x64xbf16>)
  plan.return %y : !plan.buffer<?x64xbf16>
}

// -----

plan.tensor @e : tensor<512x32xbf16> fill(random)

func.func @embed(%ids: tensor<?xi32>, %t: tensor<512x32xbf16>) -> tensor<?x32xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x32xbf16>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %h : tensor<?x32xbf16>
}

func.func @body(%x: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  %q = sg.split_heads %x : tensor<?x32xbf16> -> tensor<?x4x8xbf16>
  // CHECK: error: sg-select-kernels: 'sg.encoder_attn' has no CUDA kernel yet
  %a = sg.encoder_attn %q, %q, %q {scale = 1.0 : f64} : (tensor<?x4x8xbf16>, tensor<?x4x8xbf16>, tensor<?x4x8xbf16>) -> tensor<?x4x8xbf16>
  %m = sg.merge_heads %a : tensor<?x4x8xbf16> -> tensor<?x32xbf16>
  return %m : tensor<?x32xbf16>
}

plan.entry @prefill prefill max_tokens(8) workspace(4096) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x32xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<512x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  %y = plan.alloc offset(1024) : !plan.buffer<?x32xbf16>
  plan.call @body(%x) -> (%y) : (!plan.buffer<?x32xbf16>) -> (!plan.buffer<?x32xbf16>)
  plan.return %y : !plan.buffer<?x32xbf16>
}
