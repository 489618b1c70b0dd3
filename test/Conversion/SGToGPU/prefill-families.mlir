// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// Prefill families on their own: a chunk of up to 64 tokens through embed,
// one projection on tensor cores (gemm_mma) and the cache write of its
// output (kv_write).

// embed and kv_write launch a block per token along grid x (the runtime
// shrinks it to the call's tokens); the projection one block per 64 tokens
// x 32 rows.
// CHECK: plan.launch @sgc_kernels::@embed_0(%pos, %tokens, %{{[0-9]+}}) -> (%[[X:[0-9]+]]) grid [64, 1, 1] block [128, 1, 1] {token_grid_dim = 0 : i64}
// CHECK-NEXT: %[[Y:[0-9]+]] = plan.alloc
// CHECK-NEXT: plan.launch @sgc_kernels::@gemm_mma_0(%pos, %[[X]], %{{[0-9]+}}) -> (%[[Y]]) grid [1, 1, 1] block [128, 1, 1] {layer = 0 : i64}
// CHECK-NEXT: plan.launch @sgc_kernels::@kv_write_0(%pos, %[[Y]], %[[K:[0-9]+]]) -> (%[[K]]) grid [64, 2, 1] block [32, 1, 1] {layer = 0 : i64, token_grid_dim = 0 : i64}

// gemm_mma: a 64 x 32 tile a block, K in steps of 64. The tiles sit in
// shared memory with rows padded to 72 bf16 (the 8 rows a fragment load
// touches fall in distinct banks). Each step first
// stores the tile loaded in the step before, then (after a barrier) loads
// the next step's tile into registers, then runs its 16 mma.sync
// (m16n8k16, bf16 in, f32 accumulators) while those loads are in flight.
// The logits' projection computes the rows it is asked for only.
// CHECK-LABEL: gpu.func @gemm_mma_0(%arg0: memref<4xi64>, %arg1: memref<64x256xbf16>, %arg2: memref<32x256xbf16> {llvm.noalias, llvm.readonly}, %arg3: memref<64x32xbf16>)
// CHECK-SAME: workgroup(%[[AT:.*]] : memref<64x72xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BT:.*]] : memref<32x72xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: sg.kernel_spec = {epilogue = "none", k = 256 : i64, rows = array<i64: 32>, tile_k = 64 : i64, tile_m = 64 : i64, tile_n = 32 : i64, wanted_rows_only = true, warps = 4 : i64}
// CHECK: scf.for %[[KK:.*]] = %{{.*}} to %c256{{.*}} step %c64{{.*}} iter_args(
// CHECK-COUNT-4: vector.store {{.*}}, %[[AT]][{{.*}}] {alignment = 16 : i64} : memref<64x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-COUNT-2: vector.store {{.*}}, %[[BT]][{{.*}}] {alignment = 16 : i64} : memref<32x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<64x256xbf16>, vector<8xbf16>
// CHECK: vector.load %arg2[{{.*}}] {alignment = 16 : i64} : memref<32x256xbf16>, vector<8xbf16>
// CHECK-COUNT-16: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// Each lane rounds two neighbouring sums and stores them as one 4-byte pair.
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK-NEXT: arith.truncf {{.*}} : f32 to bf16
// CHECK-NEXT: vector.from_elements
// CHECK: vector.store {{.*}}, %arg3[{{.*}}] {alignment = 4 : i64} : memref<64x32xbf16>, vector<2xbf16>

// kv_write on a full layer: token t of the chunk goes to slot pos + t, a
// block per (token, kv head).
// CHECK-LABEL: gpu.func @kv_write_0(%arg0: memref<4xi64>, %arg1: memref<64x2x16xbf16>, %arg2: memref<64x2x16xbf16>) kernel
// CHECK-SAME: sg.kernel_spec = {head_dim = 16 : i64, heads = 2 : i64, window = 0 : i64}
// CHECK: %[[T:.*]] = gpu.block_id  x
// CHECK: %[[H:.*]] = gpu.block_id  y
// CHECK: %[[P64:.*]] = memref.load %arg0[%c0{{.*}}] : memref<4xi64>
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[P64]] : i64 to index
// CHECK-NEXT: %[[SLOT:.*]] = arith.addi %[[P]], %[[T]] : index
// CHECK: %[[V:.*]] = memref.load %arg1[%[[T]], %[[H]], %[[D:.*]]] : memref<64x2x16xbf16>
// CHECK-NEXT: memref.store %[[V]], %arg2[%[[SLOT]], %[[H]], %[[D]]] : memref<64x2x16xbf16>

plan.tensor @e : tensor<128x256xbf16> fill(random)
plan.tensor @w : tensor<32x256xbf16> fill(random)
plan.kv_layer @kv0 full layer(0) slots(64) kv_heads(2) head_dim(16, 16) : bf16

func.func @embed(%ids: tensor<?xi32>, %t: tensor<128x256xbf16>) -> tensor<?x256xbf16> {
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<128x256xbf16>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %h : tensor<?x256xbf16>
}

func.func @layer(%x: tensor<?x256xbf16>, %pos: i64, %kc: tensor<64x2x16xbf16>, %w: tensor<32x256xbf16>) -> (tensor<64x2x16xbf16>, tensor<?x32xbf16>) {
  %k = sg.linear %x, %w : (tensor<?x256xbf16>, tensor<32x256xbf16>) -> tensor<?x32xbf16>
  %kh = sg.split_heads %k : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
  %kc2 = sg.kv_write %kh into %kc at %pos : tensor<?x2x16xbf16> into tensor<64x2x16xbf16>
  return %kc2, %k : tensor<64x2x16xbf16>, tensor<?x32xbf16>
}

plan.entry @prefill prefill max_tokens(64) workspace(65536) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %e = plan.weight @e : !plan.buffer<128x256xbf16>
  %w = plan.weight @w : !plan.buffer<32x256xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<64x2x16xbf16>
  %x = plan.alloc offset(0) : !plan.buffer<?x256xbf16>
  plan.call @embed(%tokens, %e) -> (%x) : (!plan.buffer<?xi32>, !plan.buffer<128x256xbf16>) -> (!plan.buffer<?x256xbf16>)
  %y = plan.alloc offset(32768) : !plan.buffer<?x32xbf16>
  plan.call @layer(%x, %pos, %k0, %w) -> (%k0, %y) {layer = 0 : i64} : (!plan.buffer<?x256xbf16>, i64, !plan.buffer<64x2x16xbf16>, !plan.buffer<32x256xbf16>) -> (!plan.buffer<64x2x16xbf16>, !plan.buffer<?x32xbf16>)
  plan.return %y : !plan.buffer<?x32xbf16>
}
