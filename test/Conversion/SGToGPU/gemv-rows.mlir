// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// The gemv_rows family on its own: a decode projection of 64 rows over
// K = 256, which writes the entry's logits (so it is the LM head and the
// argmax follows in the same launch). A warp a row (4 warps, 16 blocks);
// the input row staged in shared memory in 16-byte vectors; each lane 8
// columns a step (128-bit loads of the weight row, an FMA on 8 f32 lanes);
// the lanes' sums meet in a five-step xor shuffle tree; lane 0 rounds and
// stores.

// CHECK: plan.launch @sgc_kernels::@gemv_rows_0(%pos, %{{[0-9]+}}, %{{[0-9]+}}) -> (%[[Y:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[A:[0-9]+]]) grid [16, 1, 1] block [128, 1, 1] :
// CHECK-NEXT: plan.return %[[Y]] argmax %[[A]]
// CHECK-LABEL: gpu.func @gemv_rows_0(%arg0: memref<4xi64>, %arg1: memref<1x256xbf16>, %arg2: memref<64x256xbf16> {llvm.noalias, llvm.readonly}, %arg3: memref<1x64xbf16>
// CHECK-SAME: workgroup(%[[ROWSM:.*]] : memref<256xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// CHECK-SAME: sg.kernel_spec = {argmax = true, epilogue = "none", k = 256 : i64, rows = array<i64: 64>, rows_per_warp = 1 : i64, vector = 8 : i64, warps = 4 : i64}
// CHECK: %[[X:.*]] = vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<1x256xbf16>, vector<8xbf16>
// CHECK-NEXT: vector.store %[[X]], %[[ROWSM]][{{.*}}] {alignment = 16 : i64} : memref<256xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: %[[LANE:.*]] = arith.remui %thread_id_x, %{{.*}} : index
// CHECK: %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// CHECK: %[[W:.*]] = vector.load %arg2[{{.*}}] {alignment = 16 : i64} : memref<64x256xbf16>, vector<8xbf16>
// CHECK-NEXT: %[[XS:.*]] = vector.load %[[ROWSM]][{{.*}}] {alignment = 16 : i64} : memref<256xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[XS]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: %[[WF:.*]] = arith.extf %[[W]] : vector<8xbf16> to vector<8xf32>
// CHECK-NEXT: vector.fma %[[WF]], %[[XF]], %{{.*}} : vector<8xf32>
// CHECK: %[[S0:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK: %[[T16:.*]], %{{.*}} = gpu.shuffle  xor %[[S0]], %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[T16]] : f32
// CHECK: %[[T8:.*]], %{{.*}} = gpu.shuffle  xor %[[S1]], %c8_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[T8]] : f32
// CHECK: %[[T4:.*]], %{{.*}} = gpu.shuffle  xor %[[S2]], %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[T4]] : f32
// CHECK: %[[T2:.*]], %{{.*}} = gpu.shuffle  xor %[[S3]], %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[S4:.*]] = arith.addf %[[S3]], %[[T2]] : f32
// CHECK: %[[T1:.*]], %{{.*}} = gpu.shuffle  xor %[[S4]], %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[S5:.*]] = arith.addf %[[S4]], %[[T1]] : f32
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S5]] : f32 to bf16
// CHECK-NEXT: memref.store %[[R]], %arg3[
// The argmax of the block's rows: a NaN wins, then the larger value, then
// on a tie the lower id.
// CHECK: gpu.barrier
// CHECK: memref.load %arg3[
// CHECK: arith.cmpf uno
// CHECK-NEXT: arith.cmpf ogt
// CHECK-NEXT: arith.cmpi slt
// CHECK-NEXT: arith.cmpf oeq

plan.tensor @e : tensor<128x256xbf16> fill(random)
plan.tensor @w : tensor<64x256xbf16> fill(random)

func.func @embed(%ids: tensor<1xi32>, %t: tensor<128x256xbf16>) -> tensor<1x256xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x256xbf16>, tensor<1xi32>) -> tensor<1x256xbf16>
  return %h : tensor<1x256xbf16>
}

func.func @proj(%x: tensor<1x256xbf16>, %w: tensor<64x256xbf16>) -> tensor<1x64xbf16> {
  %y = sg.linear %x, %w : (tensor<1x256xbf16>, tensor<64x256xbf16>) -> tensor<1x64xbf16>
  return %y : tensor<1x64xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x256xbf16>
  %w = plan.weight @w : !plan.buffer<64x256xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<1x256xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<1xi32>, !plan.buffer<128x256xbf16>) -> (!plan.buffer<1x256xbf16>)
  %y = plan.alloc offset(512) : !plan.buffer<1x64xbf16>
  plan.call @proj(%x, %w) -> (%y) : (!plan.buffer<1x256xbf16>, !plan.buffer<64x256xbf16>) -> (!plan.buffer<1x64xbf16>)
  plan.return %y : !plan.buffer<1x64xbf16>
}
