// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// row_chain on its own: RMSNorm (Gemma's 1 + w) then the residual add, on a
// decode row no projection's prologue takes (this linear has no norm of its
// own), so the chain is a launch of its own: one block per token.

// CHECK: plan.launch @sgc_kernels::@row_chain_0(%pos, %[[X:[0-9]+]], %{{[0-9]+}}) -> (%[[R:[0-9]+]]) grid [1, 1, 1] block [128, 1, 1] :
// CHECK: plan.launch @sgc_kernels::@gemv_rows_0(%pos, %[[R]],

// CHECK-LABEL: gpu.func @row_chain_0(%arg0: memref<4xi64>, %arg1: memref<1x64xbf16>, %arg2: memref<64xbf16>, %arg3: memref<1x64xbf16>)
// CHECK-SAME: workgroup(%[[PART:.*]] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: sg.kernel_spec = {steps = ["rms_norm(eps=0.000001,offset=1,w)", "add"], threads = 128 : i64, width = 64 : i64}
// The sum of squares: 8 columns a thread in a 16-byte load, added in column
// order; the warp's lanes by the xor shuffle tree; the 4 warps' sums in
// shared memory, added in warp order after a barrier.
// CHECK: vector.load %arg1[%block_id_x, %{{.*}}] {alignment = 16 : i64} : memref<1x64xbf16>, vector<8xbf16>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: vector.extract
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: memref.store %{{.*}}, %[[PART]][%{{.*}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: %[[W0:.*]] = memref.load %[[PART]][%c0{{.*}}]
// CHECK: %[[W1:.*]] = memref.load %[[PART]][%c1{{.*}}]
// CHECK: %[[W2:.*]] = memref.load %[[PART]][%c2{{.*}}]
// CHECK: %[[W3:.*]] = memref.load %[[PART]][%c3{{.*}}]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[W3]] : f32
// rsqrt(sum / 64 + eps).
// CHECK: %[[WIDTH:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[WIDTH]] : f32
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT: %[[VAR:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK-NEXT: %[[RS:.*]] = math.rsqrt %[[VAR]] : f32
// Each step rounds once, as the reference: round(x·r·(1 + w)), then
// round(that + x), stored 16 bytes at a time.
// CHECK: %[[XV:.*]] = vector.load %arg1[
// CHECK-NEXT: %[[WV:.*]] = vector.load %arg2[
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[XV]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: %[[RB:.*]] = vector.broadcast %[[RS]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[XR:.*]] = arith.mulf %[[XF]], %[[RB]] : vector<8xf32>
// CHECK-NEXT: %[[WF:.*]] = arith.extf %[[WV]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK-NEXT: %[[W1P:.*]] = arith.addf %[[ONE]], %[[WF]] : vector<8xf32>
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[XR]], %[[W1P]] : vector<8xf32>
// CHECK-NEXT: %[[NR:.*]] = arith.truncf %[[N]] : vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: %[[NF:.*]] = arith.extf %[[NR]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: %[[X2:.*]] = vector.load %arg1[
// CHECK-NEXT: %[[X2F:.*]] = arith.extf %[[X2]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[NF]], %[[X2F]] : vector<8xf32>
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[ADD]] : vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: vector.store %[[OUT]], %arg3[%block_id_x, %{{.*}}] {alignment = 16 : i64} : memref<1x64xbf16>, vector<8xbf16>

plan.tensor @e : tensor<128x64xbf16> fill(random)
plan.tensor @n : tensor<64xbf16> fill(random)
plan.tensor @w : tensor<32x64xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x64xbf16>
  return %h : tensor<1x64xbf16>
}

func.func @body(%x: tensor<1x64xbf16>, %n: tensor<64xbf16>, %w: tensor<32x64xbf16>) -> tensor<1x32xbf16> {
  %p = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<1x64xbf16>, tensor<64xbf16>) -> tensor<1x64xbf16>
  %r = sg.add %x, %p : tensor<1x64xbf16>
  %y = sg.linear %r, %w : (tensor<1x64xbf16>, tensor<32x64xbf16>) -> tensor<1x32xbf16>
  return %y : tensor<1x32xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x64xbf16>
  %n = plan.weight @n : !plan.buffer<64xbf16>
  %w = plan.weight @w : !plan.buffer<32x64xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<1x64xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<1xi32>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<1x64xbf16>)
  %y = plan.alloc offset(512) : !plan.buffer<1x32xbf16>
  plan.call @body(%x, %n, %w) -> (%y) : (!plan.buffer<1x64xbf16>, !plan.buffer<64xbf16>, !plan.buffer<32x64xbf16>) -> (!plan.buffer<1x32xbf16>)
  plan.return %y : !plan.buffer<1x32xbf16>
}
