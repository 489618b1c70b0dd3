// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// Q4_0 weights under bf16 rows, K = 256 (one group): prefill takes the i16
// tiles (Int16Tiles.h) where the variant has the int8 rows, so the groups'
// records are written for a call with tiles too (where the bf16 tiles would
// run), not only for decode's rows.
// CHECK-LABEL: func.func @proj(
// CHECK: call @sgc_rows_256_bf16_b(
// CHECK: %[[TILES:.*]] = arith.cmpi sge, %{{.*}}, %c6{{.*}} : index
// CHECK: %[[FEW:.*]] = arith.xori %[[TILES]], %true{{.*}} : i1
// CHECK: %[[DOT:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: %[[TILED:.*]] = arith.andi %[[TILES]], %[[DOT]] : i1
// CHECK: %[[EITHER:.*]] = arith.ori %[[FEW]], %[[TILED]] : i1
// CHECK: %[[ON:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: %[[QUANT:.*]] = arith.andi %[[EITHER]], %[[ON]] : i1
// CHECK: %[[ROWS:.*]] = arith.select %[[QUANT]], %{{.*}}, %c0{{.*}} : index
// CHECK: %[[REC:.*]] = memref.alloc(%[[ROWS]]) {alignment = 64 : i64} : memref<?x1024xi8>
// CHECK: call @sgc_quant_rows_256_q4g(%{{.*}}, %[[REC]])
// CHECK: call @sgc_dispatch_linear_64x256_q4_0_bf16_dot_i8(
//
// The kernel: behind the int8 flag, inside the bf16 tiles' branch, panels
// of i32 pairs and f32 scales; the pack widens a block's nibbles in order
// (low nibbles elements 0-15, high 16-31) to i16 q - 8 and takes d as f32.
// CHECK-LABEL: func.func @sgc_linear_64x256_q4_0_bf16_dot_i8(
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: scf.if %{{.*}} {
// CHECK: %[[PAIRS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x16xi32>
// CHECK: %[[SCALES:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<16xi8>
// CHECK: %[[HIGH:.*]] = arith.shrui %{{.*}}, %{{.*}} : vector<16xi8>
// CHECK: %[[NIB:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK: %[[WIDE:.*]] = arith.extui %[[NIB]] : vector<32xi8> to vector<32xi16>
// CHECK: arith.subi %[[WIDE]], %{{.*}} : vector<32xi16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// The tile: over the blocks of 32, one panel load a K pair and a vpdpwssd
// a token from zero (the block's exact integer sums), the pair broadcast
// from the token's record (group * 576 + pair of blocks * 128 + block in
// the pair * 32 + 4 a pair); then per token d * sa and one f32 FMA.
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args(
// CHECK: %[[W:.*]] = vector.load %[[PAIRS]][%{{.*}}, %{{.*}}] : memref<?x16xi32>, vector<16xi32>
// CHECK: %[[WW:.*]] = vector.bitcast %[[W]] : vector<16xi32> to vector<32xi16>
// CHECK: arith.muli %{{.*}}, %c576{{.*}} : index
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x1024xi8>, vector<4xi8>
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: %[[XX:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<32xi16>
// CHECK: %[[S0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%[[ZERO:.*]], %[[WW]], %[[XX]])
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%[[S0]], %{{.*}}, %{{.*}})
// CHECK: %[[D:.*]] = vector.load %[[SCALES]][%{{.*}}, %{{.*}}] : memref<?x16xf32>, vector<16xf32>
// CHECK: %[[SA:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[SCALE:.*]] = arith.mulf %[[D]], %[[SA]] : vector<16xf32>
// CHECK: %[[SUM:.*]] = arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma %[[SUM]], %[[SCALE]], %{{.*}} : vector<16xf32>
func.func @proj(%x: tensor<?x256xbf16>, %w: tensor<64x256x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
