// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s
// The image-block mask of the decoder's attention (SGOps.td, sg.sliding_attn
// and sg.full_attn with `blocks`): a query of a block (id >= 0) looks on to
// the chunk's end, and a key ahead of it is masked unless it carries the
// query's block id. The window's lower bound is unchanged. The numbers are
// checked by block-mask-run.test.

// CHECK-LABEL: func.func @sliding(
// CHECK: call @sgc_dispatch_attn_w3_2x1x4x4_s3_f32_f32_blocks_3FE0000000000000(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %arg4, %arg5, %{{.*}}, %{{.*}}, %{{.*}})
func.func @sliding(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<3x1x4xf32>, %vc: tensor<3x1x4xf32>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x2x4xf32> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos blocks(%blocks) {window = 3 : i64, scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<3x1x4xf32>, tensor<3x1x4xf32>, i64, tensor<?xi32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// Without blocks: the text kernel, its name and arguments as before.
// CHECK-LABEL: func.func @sliding_text(
// CHECK: call @sgc_dispatch_attn_w3_2x1x4x4_s3_f32_f32_3FE0000000000000(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %arg4, %arg5, %{{.*}}, %{{.*}})
func.func @sliding_text(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<3x1x4xf32>, %vc: tensor<3x1x4xf32>, %pos: i64) -> tensor<?x2x4xf32> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 3 : i64, scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<3x1x4xf32>, tensor<3x1x4xf32>, i64) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// CHECK-LABEL: func.func @full(
// CHECK: call @sgc_dispatch_attn_full_2x1x4x4_s16_f32_f32_blocks_3FE0000000000000(
func.func @full(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<16x1x4xf32>, %vc: tensor<16x1x4xf32>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x2x4xf32> {
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %pos blocks(%blocks) {scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<16x1x4xf32>, tensor<16x1x4xf32>, i64, tensor<?xi32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// The sliding kernel with blocks: the ids come after the position.
// CHECK-LABEL: func.func @sgc_attn_w3_2x1x4x4_s3_f32_f32_blocks_3FE0000000000000(
// CHECK-SAME: %{{.*}}: memref<1xi64>, %[[BLOCKS:[a-z0-9]+]]: memref<?xi32>, %{{.*}}: memref<?x2x4xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK: %[[TOKENS:.*]] = memref.dim %arg0, %c0
// CHECK: %[[POS0:.*]] = arith.index_cast
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %[[I:[a-z0-9]+]] = %{{.*}} to %[[TOKENS]] step
// CHECK: %[[P:.*]] = arith.addi %[[POS0]], %[[I]] : index
// The window's lower bound: lo = max(0, p + 1 - window), p - 2 at window 3.
// CHECK: %[[START:.*]] = arith.subi %[[P]], %c2{{.*}} : index
// CHECK: %[[LO:.*]] = arith.select %{{.*}}, %[[START]], %{{.*}} : index
// The end: p + 1, or the chunk's end for a query in a block.
// CHECK: %[[CAUSAL:.*]] = arith.addi %[[P]], %c1
// CHECK: %[[BI:.*]] = memref.load %[[BLOCKS]][%[[I]]] : memref<?xi32>
// CHECK: %[[INBLOCK:.*]] = arith.cmpi sge, %[[BI]], %c0_i32 : i32
// CHECK: %[[END:.*]] = arith.addi %[[POS0]], %[[TOKENS]] : index
// CHECK: %[[HI:.*]] = arith.select %[[INBLOCK]], %[[END]], %[[CAUSAL]] : index
// CHECK: %[[NUM:.*]] = arith.subi %[[HI]], %[[LO]] : index
// The predicate: a key ahead of the query is masked unless in its block.
// CHECK: scf.for %[[T:[a-z0-9]+]] = %{{.*}} to %[[NUM]]
// CHECK: %[[J:.*]] = arith.addi %[[LO]], %[[T]] : index
// CHECK: %[[AHEAD:.*]] = arith.cmpi ugt, %[[J]], %[[P]] : index
// CHECK: %[[MASKED:.*]] = scf.if %[[AHEAD]] -> (i1) {
// CHECK: %[[ROW:.*]] = arith.subi %[[J]], %[[POS0]] : index
// CHECK: %[[BJ:.*]] = memref.load %[[BLOCKS]][%[[ROW]]] : memref<?xi32>
// CHECK: %[[OTHER:.*]] = arith.cmpi ne, %[[BJ]], %[[BI]] : i32
// CHECK: scf.yield %[[OTHER]] : i1
// CHECK: } else {
// CHECK: scf.yield %false : i1
// CHECK: %[[S:.*]] = scf.if %[[MASKED]] -> (f32) {
// CHECK-NEXT: scf.yield %[[NEGINF]] : f32
// CHECK: } else {
// CHECK: memref.store %[[S]], %{{.*}}[%[[T]]]
// A masked key weighs exactly 0: 16 keys at a time, then one at a time.
// CHECK: %[[SV:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<?xf32>, vector<16xf32>
// CHECK: %[[EV:.*]] = math.exp %{{.*}} : vector<16xf32>
// CHECK: %[[NEGINFV:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: %[[ISMASKEDV:.*]] = arith.cmpf oeq, %[[SV]], %[[NEGINFV]] : vector<16xf32>
// CHECK: arith.select %[[ISMASKEDV]], %{{.*}}, %[[EV]] : vector<16xi1>, vector<16xf32>
// CHECK: %[[SC:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[NEGINFS:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ISMASKED:.*]] = arith.cmpf oeq, %[[SC]], %[[NEGINFS]] : f32
// CHECK: arith.select %[[ISMASKED]], %{{.*}}, %[[E]] : f32

// The text kernel has no ids and no predicate.
// CHECK-LABEL: func.func @sgc_attn_w3_2x1x4x4_s3_f32_f32_3FE0000000000000(
// CHECK-SAME: %{{.*}}: memref<1xi64>, %{{.*}}: memref<?x2x4xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-NOT: memref<?xi32>
// CHECK-NOT: arith.cmpi ugt
// CHECK: return

// The full kernel: the same predicate, no window (lo = 0).
// CHECK-LABEL: func.func @sgc_attn_full_2x1x4x4_s16_f32_f32_blocks_3FE0000000000000(
// CHECK-SAME: %{{.*}}: memref<1xi64>, %[[BLOCKS:[a-z0-9]+]]: memref<?xi32>,
// CHECK: %[[BI:.*]] = memref.load %[[BLOCKS]][%{{.*}}] : memref<?xi32>
// CHECK: arith.cmpi sge, %[[BI]], %c0_i32 : i32
// CHECK: %[[AHEAD:.*]] = arith.cmpi ugt
// CHECK: scf.if %[[AHEAD]] -> (i1) {
// CHECK: %[[BJ:.*]] = memref.load %[[BLOCKS]][%{{.*}}] : memref<?xi32>
// CHECK: arith.cmpi ne, %[[BJ]], %[[BI]] : i32
