// RUN: sgc-opt %s -sg-select-kernels -convert-sg-to-gpu | FileCheck %s
// Decode attention families on their own, on a sliding layer (a ring of 8
// slots): the q/k norms with RoPE and both cache writes in one launch
// (qknorm_rope_append), then the split-K attention over the window.

// One grid row per head of each job: 4 q heads, 2 k heads, 2 v heads.
// CHECK: plan.launch @sgc_kernels::@qknorm_rope_append_0(%pos, {{.*}}) -> (%[[Q:[0-9]+]], %[[K:[0-9]+]], %[[KC:[0-9]+]], %[[VC:[0-9]+]]) grid [1, 8, 1] block [32, 1, 1] {layer = 0 : i64}
// CHECK-NEXT: plan.alloc
// CHECK-NEXT: plan.alloc
// CHECK-NEXT: plan.alloc
// CHECK-NEXT: plan.launch @sgc_kernels::@attn_decode_splitk_0(%pos, %[[Q]], %[[K]], %{{[0-9]+}}, %[[KC]], %[[VC]]) -> ({{.*}}) grid [2, 2, 1] block [128, 1, 1] {layer = 0 : i64}

// CHECK-LABEL: gpu.func @qknorm_rope_append_0(
// CHECK-SAME: jobs = [{append = false, {{.*}}heads = 4 : i64, inv_freq = [1.000000e+00 : f32, {{.*}}], norm_offset = 1 : i64, norm_weight = true, window = 0 : i64}, {append = true, {{.*}}heads = 2 : i64, {{.*}}window = 8 : i64}, {append = true, copy, head_dim = 16 : i64, heads = 2 : i64, window = 8 : i64}]
// The k job (rows 4 and 5): the token's slot in the ring is (pos + t) mod 8;
// the rotated pair goes to the chunk's k and to the cache at that slot.
// CHECK: %[[KH:.*]] = arith.subi %block_id_y, %c4{{.*}} : index
// CHECK: %[[P64:.*]] = memref.load %arg0[%c0{{.*}}] : memref<4xi64>
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[P64]] : i64 to index
// CHECK-NEXT: %[[TP:.*]] = arith.addi %[[P]], %block_id_x : index
// CHECK: %[[SLOT:.*]] = arith.remui %[[TP]], %c8{{.*}} : index
// CHECK: math.rsqrt
// CHECK: math.cos
// CHECK: math.sin
// CHECK: memref.store %[[LO:.*]], %arg9[%block_id_x, %[[KH]], %[[D:.*]]] : memref<1x2x16xbf16>
// CHECK-NEXT: memref.store %[[LO]], %arg5[%[[SLOT]], %[[KH]], %[[D]]] : memref<8x2x16xbf16>
// CHECK-NEXT: memref.store %[[HI:.*]], %arg9[%block_id_x, %[[KH]], %[[D2:.*]]] : memref<1x2x16xbf16>
// CHECK-NEXT: memref.store %[[HI]], %arg5[%[[SLOT]], %[[KH]], %[[D2]]] : memref<8x2x16xbf16>
// The v job (rows 6 and 7): a copy into the same ring slot.
// CHECK: %[[VH:.*]] = arith.subi %block_id_y, %c6{{.*}} : index
// CHECK: %[[VP64:.*]] = memref.load %arg0[%c0{{.*}}] : memref<4xi64>
// CHECK-NEXT: %[[VP:.*]] = arith.index_cast %[[VP64]] : i64 to index
// CHECK-NEXT: %[[VTP:.*]] = arith.addi %[[VP]], %block_id_x : index
// CHECK: %[[VSLOT:.*]] = arith.remui %[[VTP]], %c8{{.*}} : index
// CHECK: %[[V:.*]] = memref.load %arg6[%block_id_x, %[[VH]], %[[VD:.*]]] : memref<1x2x16xbf16>
// CHECK-NEXT: memref.store %[[V]], %arg7[%[[VSLOT]], %[[VH]], %[[VD]]] : memref<8x2x16xbf16>

// attn_decode_splitk: the keys in view are [max(0, pos + 1 - 8), pos + 1),
// split in 2 ranges of ceil(n / 2); a key before pos comes from its ring
// slot (key mod 8), the key at pos from the chunk.
// CHECK-LABEL: gpu.func @attn_decode_splitk_0(
// CHECK-SAME: sg.kernel_spec = {head_dim = 16 : i64, heads_per_warp = 2 : i64, key_groups = 4 : i64, kv_heads = 2 : i64, mma = false, q_heads = 4 : i64, scale = 2.500000e-01 : f64, slots = 8 : i64, splits = 2 : i64, v_head_dim = 16 : i64, window = 8 : i64}
// CHECK: %[[AP64:.*]] = memref.load %arg0[%c0] : memref<4xi64>
// CHECK-NEXT: %[[AP:.*]] = arith.index_cast %[[AP64]] : i64 to index
// CHECK: %[[END:.*]] = arith.addi %[[AP]], %c1{{.*}} : index
// CHECK: %[[E8:.*]] = arith.subi %[[AP]], %c7 : index
// CHECK: %[[POSV:.*]] = arith.cmpi sgt, %[[E8]], %c0{{.*}} : index
// CHECK-NEXT: %[[BEGIN:.*]] = arith.select %[[POSV]], %[[E8]], %c0{{.*}} : index
// CHECK-NEXT: %[[N:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK: %[[N1:.*]] = arith.addi %[[N]], %c1{{.*}} : index
// CHECK: %[[PER:.*]] = arith.divui %[[N1]], %c2 : index
// CHECK: scf.for %[[KEY:.*]] = %{{.*}} to %{{.*}} step %c4{{.*}} iter_args(
// CHECK-NEXT: %[[CACHED:.*]] = arith.cmpi ult, %[[KEY]], %[[AP]] : index
// CHECK-NEXT: scf.if %[[CACHED]]
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: arith.remui %[[KEY]], %[[C8]] : index
// CHECK: math.exp
// CHECK: memref.atomic_rmw addi

plan.tensor @q : tensor<1x4x16xbf16> fill(random)
plan.tensor @k : tensor<1x2x16xbf16> fill(random)
plan.tensor @v : tensor<1x2x16xbf16> fill(random)
plan.tensor @hn : tensor<16xbf16> fill(random)
plan.tensor @wo : tensor<32x64xbf16> fill(random)
plan.kv_layer @kv0 ring layer(0) slots(8) kv_heads(2) head_dim(16, 16) : bf16

func.func @attn(%qh: tensor<1x4x16xbf16>, %kh: tensor<1x2x16xbf16>, %vh: tensor<1x2x16xbf16>, %pos: i64,
                %kc: tensor<8x2x16xbf16>, %vc: tensor<8x2x16xbf16>, %hn: tensor<16xbf16>, %wo: tensor<32x64xbf16>)
    -> (tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<1x32xbf16>) {
  %q = sg.norm_rope %qh norm(%hn) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<1x4x16xbf16>, tensor<16xbf16>, i64) -> tensor<1x4x16xbf16>
  %k, %kc2 = sg.norm_rope %kh norm(%hn) at %pos into %kc {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64, window = 8 : i64}
      : (tensor<1x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<1x2x16xbf16>, tensor<8x2x16xbf16>)
  %a = sg.sliding_attn %q, %k, %vh cache(%kc, %vc) at %pos {scale = 0.25 : f64, window = 8 : i64}
      : (tensor<1x4x16xbf16>, tensor<1x2x16xbf16>, tensor<1x2x16xbf16>, tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, i64) -> tensor<1x4x16xbf16>
  %vc2 = sg.kv_write %vh into %vc at %pos {window = 8 : i64} : tensor<1x2x16xbf16> into tensor<8x2x16xbf16>
  %m = sg.merge_heads %a : tensor<1x4x16xbf16> -> tensor<1x64xbf16>
  %y = sg.linear %m, %wo : (tensor<1x64xbf16>, tensor<32x64xbf16>) -> tensor<1x32xbf16>
  return %kc2, %vc2, %y : tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, tensor<1x32xbf16>
}

plan.entry @decode decode max_tokens(1) workspace(4096) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %q = plan.weight @q : !plan.buffer<1x4x16xbf16>
  %k = plan.weight @k : !plan.buffer<1x2x16xbf16>
  %v = plan.weight @v : !plan.buffer<1x2x16xbf16>
  %hn = plan.weight @hn : !plan.buffer<16xbf16>
  %k0 = plan.kv_cache @kv0 key : !plan.buffer<8x2x16xbf16>
  %v0 = plan.kv_cache @kv0 value : !plan.buffer<8x2x16xbf16>
  %wo = plan.weight @wo : !plan.buffer<32x64xbf16>
  %o = plan.alloc offset(0) : !plan.buffer<1x32xbf16>
  plan.call @attn(%q, %k, %v, %pos, %k0, %v0, %hn, %wo) -> (%k0, %v0, %o) {layer = 0 : i64}
      : (!plan.buffer<1x4x16xbf16>, !plan.buffer<1x2x16xbf16>, !plan.buffer<1x2x16xbf16>, i64, !plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<16xbf16>, !plan.buffer<32x64xbf16>) -> (!plan.buffer<8x2x16xbf16>, !plan.buffer<8x2x16xbf16>, !plan.buffer<1x32xbf16>)
  plan.return %o : !plan.buffer<1x32xbf16>
}
