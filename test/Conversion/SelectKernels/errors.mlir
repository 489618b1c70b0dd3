// RUN: not sgc-opt %s -sg-select-kernels 2>&1 | FileCheck %s
// RUN: not sgc-opt %s -sg-select-kernels=chip=sm_80 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not sgc-opt %s -convert-sg-to-gpu 2>&1 | FileCheck %s --check-prefix=UNSELECTED
// A body serves every call of it with one set of kernels: a projection
// that is the LM head in one call and not in another is refused by name.
// A chip sgc has no description of is refused, and convert-sg-to-gpu
// refuses an op nobody selected a kernel for.

plan.tensor @e : tensor<64x32xbf16> fill(random)
plan.tensor @w : tensor<32x32xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<64x32xbf16>) -> tensor<1x32xbf16> {
  // UNSELECTED: error: convert-sg-to-gpu: no kernel was selected for this op (sg-select-kernels runs first)
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<64x32xbf16>, tensor<1xi32>) -> tensor<1x32xbf16>
  return %h : tensor<1x32xbf16>
}

func.func @proj(%x: tensor<1x32xbf16>, %w: tensor<32x32xbf16>) -> tensor<1x32xbf16> {
  // CHECK: error: sg-select-kernels: the calls of this body choose #sg.kernel<"gemv_rows"> and #sg.kernel<"gemv_rows", {lm_head}> for this op; a body must have one choice
  %y = sg.linear %x, %w : (tensor<1x32xbf16>, tensor<32x32xbf16>) -> tensor<1x32xbf16>
  return %y : tensor<1x32xbf16>
}

// CHIP: error: sg-select-kernels: no CUDA chip 'sm_80' (sgc builds for sm_90a)
plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<64x32xbf16>
  %w = plan.weight @w : !plan.buffer<32x32xbf16>
  %x0 = plan.alloc offset(0) : !plan.buffer<1x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x0) : (!plan.buffer<1xi32>, !plan.buffer<64x32xbf16>) -> (!plan.buffer<1x32xbf16>)
  %x1 = plan.alloc offset(64) : !plan.buffer<1x32xbf16>
  plan.call @proj(%x0, %w) -> (%x1) : (!plan.buffer<1x32xbf16>, !plan.buffer<32x32xbf16>) -> (!plan.buffer<1x32xbf16>)
  %x2 = plan.alloc offset(128) : !plan.buffer<1x32xbf16>
  plan.call @proj(%x1, %w) -> (%x2) : (!plan.buffer<1x32xbf16>, !plan.buffer<32x32xbf16>) -> (!plan.buffer<1x32xbf16>)
  plan.return %x2 : !plan.buffer<1x32xbf16>
}
