// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// attn_prefill on its own: a chunk of up to 64 queries on a full layer
// (cache of 128 slots), 4 q heads over 2 kv heads. The projections around
// it are gemm_mma launches (prefill-families.mlir).

// A block per kv head and 64 queries (the grid is fixed: blocks past the
// call's tokens return at once); the chunk's cache writes follow the
// attention, which reads the caches as they were before the chunk.
// CHECK: plan.launch @sgc_kernels::@attn_prefill_0(%pos, %[[Q:[0-9]+]], %[[K:[0-9]+]], %[[V:[0-9]+]], %[[KC:[0-9]+]], %[[VC:[0-9]+]]) -> (%{{[0-9]+}}) grid [2, 1, 1] block [256, 1, 1] {layer = 0 : i64}
// CHECK-NEXT: plan.launch @sgc_kernels::@kv_write_0(%pos, %[[K]], %[[KC]]) -> (%[[KC]])
// CHECK-NEXT: plan.launch @sgc_kernels::@kv_write_0(%pos, %[[V]], %[[VC]]) -> (%[[VC]])

// CHECK-LABEL: gpu.func @attn_prefill_0(
// CHECK-SAME: sg.kernel_spec = {col_splits = 1 : i64, head_dim = 16 : i64, kv_heads = 2 : i64, q_heads = 4 : i64, row_groups = 8 : i64, scale = 2.500000e-01 : f64, slots = 128 : i64, tile_keys = 64 : i64, tile_queries = 64 : i64, v_head_dim = 16 : i64, window = 0 : i64}
// Keys in tiles of 64; a key before the chunk from the cache, a key of the
// chunk from the chunk's k (row key - pos), 16 bytes a load, into a shared
// tile with rows padded to 24 bf16.
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c64{{.*}} iter_args(
// CHECK: %[[KEY:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[INVIEW:.*]] = arith.cmpi ult, %[[KEY]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[INVIEW]] -> (vector<8xbf16>) {
// CHECK-NEXT: %[[CACHED:.*]] = arith.cmpi ult, %[[KEY]], %[[POS:.*]] : index
// CHECK-NEXT: scf.if %[[CACHED]] -> (vector<8xbf16>) {
// CHECK-NEXT: vector.load %arg4[%[[KEY]], %block_id_x, %{{.*}}] {alignment = 16 : i64} : memref<128x2x16xbf16>, vector<8xbf16>
// CHECK: } else {
// CHECK-NEXT: %[[ROW:.*]] = arith.subi %[[KEY]], %[[POS]] : index
// CHECK-NEXT: vector.load %arg2[%[[ROW]], %block_id_x, %{{.*}}] {alignment = 16 : i64} : memref<64x2x16xbf16>, vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<64x24xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// q·k on tensor cores; each score rounded to bf16 as the reference's
// matmul output, scaled and rounded again; a key after the query (causal)
// scores -inf.
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: %[[S:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[S]] : bf16 to f32
// CHECK-NEXT: %[[SS:.*]] = arith.mulf %[[SF]], %{{.*}} : f32
// CHECK-NEXT: %[[SR:.*]] = arith.truncf %[[SS]] : f32 to bf16
// CHECK-NEXT: %[[SRF:.*]] = arith.extf %[[SR]] : bf16 to f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[SEEN:.*]] = arith.cmpi sle, %[[ZERO]], %{{.*}} : i32
// CHECK-NEXT: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: arith.select %[[SEEN]], %[[SRF]], %[[NEGINF]] : f32
// CHECK: math.exp
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>

plan.tensor @e : tensor<128x64xbf16> fill(random)
plan.tensor @wq : tensor<64x64xbf16> fill(random)
plan.tensor @wkv : tensor<32x64xbf16> fill(random)
plan.tensor @wo : tensor<64x64xbf16> fill(random)
plan.kv_layer @kv0 full layer(0) slots(128) kv_heads(2) head_dim(16, 16) : bf16

func.func @embed(%ids: tensor<?xi32>, %t: tensor<128x64xbf16>) -> tensor<?x64xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x64xbf16>, tensor<?xi32>) -> tensor<?x64xbf16>
  return %h : tensor<?x64xbf16>
}

func.func @layer(%x: tensor<?x64xbf16>, %pos: i64, %kc: tensor<128x2x16xbf16>, %vc: tensor<128x2x16xbf16>,
                 %wq: tensor<64x64xbf16>, %wk: tensor<32x64xbf16>, %wv: tensor<32x64xbf16>, %wo: tensor<64x64xbf16>)
    -> (tensor<128x2x16xbf16>, tensor<128x2x16xbf16>, tensor<?x64xbf16>) {
  %qf = sg.linear %x, %wq : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
  %kf = sg.linear %x, %wk : (tensor<?x64xbf16>, tensor<32x64xbf16>) -> tensor<?x32xbf16>
  %vf = sg.linear %x, %wv : (tensor<?x64xbf16>, tensor<32x64xbf16>) -> tensor<?x32xbf16>
  %q = sg.split_heads %qf : tensor<?x64xbf16> -> tensor<?x4x16xbf16>
  %k = sg.split_heads %kf : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %v = sg.split_heads %vf : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %pos {scale = 0.25 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<128x2x16xbf16>, tensor<128x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %kc2 = sg.kv_write %k into %kc at %pos : tensor<?x2x16xbf16> into tensor<128x2x16xbf16>
  %vc2 = sg.kv_write %v into %vc at %pos : tensor<?x2x16xbf16> into tensor<128x2x16xbf16>
  %m = sg.merge_heads %a : tensor<?x4x16xbf16> -> tensor<?x64xbf16>
  %y = sg.linear %m, %wo : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
  return %kc2, %vc2, %y : tensor<128x2x16xbf16>, tensor<128x2x16xbf16>, tensor<?x64xbf16>
}

plan.entry @prefill prefill max_tokens(64) workspace(65536) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x64xbf16>
  %wq = plan.weight @wq : !plan.buffer<64x64xbf16>
  %wkv = plan.weight @wkv : !plan.buffer<32x64xbf16>
  %wo = plan.weight @wo : !plan.buffer<64x64xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<128x2x16xbf16>
  %v0 = plan.kv_cache @kv0 value : !plan.buffer<128x2x16xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x64xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<128x64xbf16>) -> (!plan.buffer<?x64xbf16>)
  %y = plan.alloc offset(8192) : !plan.buffer<?x64xbf16>
  plan.call @layer(%x, %pos, %k0, %v0, %wq, %wkv, %wkv, %wo) -> (%k0, %v0, %y) {layer = 0 : i64}
      : (!plan.buffer<?x64xbf16>, i64, !plan.buffer<128x2x16xbf16>, !plan.buffer<128x2x16xbf16>, !plan.buffer<64x64xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<32x64xbf16>, !plan.buffer<64x64xbf16>) -> (!plan.buffer<128x2x16xbf16>, !plan.buffer<128x2x16xbf16>, !plan.buffer<?x64xbf16>)
  plan.return %y : !plan.buffer<?x64xbf16>
}
