// RUN: not sgc-opt %s -sg-select-kernels 2>&1 | FileCheck %s
// The CUDA attention kernels read keys from the K cache: a V-only layer
// (keys_from_values, issue 37) is refused by name rather than run with V as
// its keys. The CUDA target compiles Gemma 4 with K and V cached
// (test/e2e/kv-plan.test).

plan.tensor @e : tensor<512x64xbf16> fill(random)
plan.tensor @c : tensor<16x1x64xbf16> fill(random)
plan.tensor @w : tensor<64xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<512x64xbf16>) -> tensor<1x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x64xbf16>, tensor<1xi32>) -> tensor<1x64xbf16>
  return %h : tensor<1x64xbf16>
}

func.func @body(%x: tensor<1x64xbf16>, %c: tensor<16x1x64xbf16>, %w: tensor<64xbf16>, %pos: i64) -> tensor<1x64xbf16> {
  %q = sg.split_heads %x : tensor<1x64xbf16> -> tensor<1x1x64xbf16>
  // CHECK: error: sg-select-kernels: 'sg.full_attn' with keys_from_values (a V-only cache) has no CUDA kernel yet; the CUDA target keeps K and V
  %a = sg.full_attn %q, %q, %q cache(%c, %c) at %pos keys_from_values(%w)
      {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+04 : f64, key_rotary_fraction = 0.5 : f64, key_basis = "head_width"}
      : (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>, tensor<1x1x64xbf16>, tensor<16x1x64xbf16>, tensor<16x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<1x1x64xbf16>
  %m = sg.merge_heads %a : tensor<1x1x64xbf16> -> tensor<1x64xbf16>
  return %m : tensor<1x64xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<512x64xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<1x64xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<1xi32>, !plan.buffer<512x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  %c = plan.weight @c : !plan.buffer<16x1x64xbf16>
  %w = plan.weight @w : !plan.buffer<64xbf16>
  %y = plan.alloc offset(1024) : !plan.buffer<1x64xbf16>
  plan.call @body(%x, %c, %w, %pos) -> (%y) : (!plan.buffer<1x64xbf16>, !plan.buffer<16x1x64xbf16>, !plan.buffer<64xbf16>, i64) -> (!plan.buffer<1x64xbf16>)
  plan.return %y : !plan.buffer<1x64xbf16>
}
