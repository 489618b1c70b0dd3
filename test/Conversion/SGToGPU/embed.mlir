// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// The embed family on its own: one block per token, 128 threads striding
// the row; an id past the table reads row 0 instead of memory past it; the
// scale is applied in f32 and the product rounded once.

// CHECK: plan.launch @sgc_kernels::@embed_0(%pos, %tokens, %{{[0-9]+}}) -> (%{{[0-9]+}}) grid [1, 1, 1] block [128, 1, 1] :
// CHECK-LABEL: gpu.func @embed_0(%arg0: memref<4xi64>, %arg1: memref<1xi32>, %arg2: memref<128x32xbf16>, %arg3: memref<1x32xbf16>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>, sg.kernel_spec = {scale = 2.000000e+00 : f32, threads = 128 : i64}
// CHECK: %[[TOK:.*]] = gpu.block_id  x
// CHECK: %[[ID32:.*]] = memref.load %arg1[%[[TOK]]] : memref<1xi32>
// CHECK: %[[ID:.*]] = arith.index_cast %[[ID32]] : i32 to index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[ROW:.*]] = arith.select %[[IN]], %[[ID]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[TID:.*]] = gpu.thread_id  x
// CHECK: scf.for %[[COL:.*]] = %[[TID]] to %c32{{(_[0-9]+)?}} step %c128{{(_[0-9]+)?}} {
// CHECK-NEXT: %[[W:.*]] = memref.load %arg2[%[[ROW]], %[[COL]]] : memref<128x32xbf16>
// CHECK-DAG: %[[S:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[WF:.*]] = arith.extf %[[W]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[WF]], %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT: memref.store %[[R]], %arg3[%[[TOK]], %[[COL]]] : memref<1x32xbf16>
plan.tensor @e : tensor<128x32xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x32xbf16>) -> tensor<1x32xbf16> {
  %h = sg.embed %t[%ids] scale(2.0) : (tensor<128x32xbf16>, tensor<1xi32>) -> tensor<1x32xbf16>
  return %h : tensor<1x32xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x32xbf16>
  %x0 = plan.alloc offset(0) : !plan.buffer<1x32xbf16>
  plan.call @embed(%tokens, %e) -> (%x0) : (!plan.buffer<1xi32>, !plan.buffer<128x32xbf16>) -> (!plan.buffer<1x32xbf16>)
  plan.return %x0 : !plan.buffer<1x32xbf16>
}
