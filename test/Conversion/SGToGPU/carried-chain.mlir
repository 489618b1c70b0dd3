// RUN: sgc-opt %s -split-input-file -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// A decode step's last row chain (the residual add after a projection),
// whose result is the step's output, is carried into the next step
// (convert-sg-to-gpu's per-entry state): a next step that does not start
// with a projection reading it launches it first, on its own; after the
// entry's last step it launches just before the return.

// CHECK-LABEL: plan.entry @decode
// CHECK: plan.launch @sgc_kernels::@embed_0(%pos, %tokens, %{{[0-9]+}}) -> (%[[X:[0-9]+]])
// CHECK: plan.launch @sgc_kernels::@gemv_rows_0(%pos, %[[X]], %{{[0-9]+}}) -> (%[[Y:[0-9]+]])
// CHECK: plan.launch @sgc_kernels::@row_chain_0(%pos, %[[Y]], %[[X]]) -> (%[[R:[0-9]+]])
// CHECK-NEXT: plan.launch @sgc_kernels::@row_chain_1(%pos, %[[R]]) -> (%[[G:[0-9]+]])
// CHECK-NEXT: plan.return %[[G]]
// CHECK: sg.kernel_spec = {steps = ["add"]
// CHECK: sg.kernel_spec = {steps = ["gelu_tanh"]

plan.tensor @e : tensor<128x64xbf16> fill(random)
plan.tensor @w : tensor<64x64xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x64xbf16>
  return %h : tensor<1x64xbf16>
}

func.func @body(%x: tensor<1x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<1x64xbf16> {
  %y = sg.linear %x, %w : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r = sg.add %y, %x : tensor<1x64xbf16>
  return %r : tensor<1x64xbf16>
}

func.func @tail(%x: tensor<1x64xbf16>) -> tensor<1x64xbf16> {
  %g = sg.gelu_tanh %x : tensor<1x64xbf16>
  return %g : tensor<1x64xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x64xbf16>
  %w = plan.weight @w : !plan.buffer<64x64xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<1x64xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<1xi32>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  %y = plan.alloc offset(512) : !plan.buffer<1x64xbf16>
  plan.call @body(%x, %w) -> (%y) : (!plan.buffer<1x64xbf16>, !plan.buffer<64x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  %z = plan.alloc offset(1024) : !plan.buffer<1x64xbf16>
  plan.call @tail(%y) -> (%z) : (!plan.buffer<1x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  plan.return %z : !plan.buffer<1x64xbf16>
}

// -----

// CHECK-LABEL: plan.entry @decode
// CHECK: plan.launch @sgc_kernels::@embed_0(%pos, %tokens, %{{[0-9]+}}) -> (%[[X:[0-9]+]])
// CHECK: plan.launch @sgc_kernels::@gemv_rows_0(%pos, %[[X]], %{{[0-9]+}}) -> (%[[Y:[0-9]+]])
// CHECK-NEXT: plan.launch @sgc_kernels::@row_chain_0(%pos, %[[Y]], %[[X]]) -> (%[[R:[0-9]+]])
// CHECK-NEXT: plan.return %[[R]]
// CHECK: sg.kernel_spec = {steps = ["add"]

plan.tensor @e : tensor<128x64xbf16> fill(random)
plan.tensor @w : tensor<64x64xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x64xbf16>
  return %h : tensor<1x64xbf16>
}

func.func @body(%x: tensor<1x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<1x64xbf16> {
  %y = sg.linear %x, %w : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r = sg.add %y, %x : tensor<1x64xbf16>
  return %r : tensor<1x64xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x64xbf16>
  %w = plan.weight @w : !plan.buffer<64x64xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<1x64xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<1xi32>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  %y = plan.alloc offset(512) : !plan.buffer<1x64xbf16>
  plan.call @body(%x, %w) -> (%y) : (!plan.buffer<1x64xbf16>, !plan.buffer<64x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  plan.return %y : !plan.buffer<1x64xbf16>
}
