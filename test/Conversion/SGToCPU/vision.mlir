// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s
// The CPU lowering of the vision towers' ops: where each one computes in f32
// and where it rounds (SGOps.td states the math), the linear's bias inside
// the kernel's one rounding, the encoder attention's mask. The numbers
// themselves are checked by the towers' end-to-end tests against HF.

// 2-D RoPE of head width 12: inv_freq[i] = 100^(-2i/6), i < 3.
// CHECK: memref.global "private" constant @[[$INV:sgc_rope_inv_freq_3_[0-9A-F]+]] : memref<3xf32> = dense<[1.000000e+00, 0.215443447, 0.046415884]>

// A bias is a kernel variant of its own (the decoder's kernels keep their
// names and code) and one more buffer for the dispatcher.
// CHECK-LABEL: func.func @bias_linear(
// CHECK: call @sgc_dispatch_linear_32x32_bf16_bf16_dot_bbf16(%arg0, %{{.*}}, %{{.*}}, %arg2, %arg3, %{{.*}})
func.func @bias_linear(%x: tensor<18x32xbf16>, %w: tensor<32x32xbf16>, %b: tensor<32xbf16>) -> tensor<18x32xbf16> {
  %y = sg.linear %x, %w bias(%b) : (tensor<18x32xbf16>, tensor<32x32xbf16>, tensor<32xbf16>) -> tensor<18x32xbf16>
  return %y : tensor<18x32xbf16>
}

// A convolution weight is viewed as [out, c·ky·kx], row-major.
// CHECK-LABEL: func.func @conv_linear(
// CHECK: %[[W:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1, 2, 3]] : memref<32x3x4x4xbf16> into memref<32x48xbf16>
// CHECK: call @sgc_dispatch_linear_32x48_bf16_bf16_dot_bbf16(%arg0, %{{.*}}, %{{.*}}, %[[W]], %arg3, %{{.*}})
func.func @conv_linear(%x: tensor<16x48xbf16>, %w: tensor<32x3x4x4xbf16>, %b: tensor<32xbf16>) -> tensor<16x32xbf16> {
  %y = sg.linear %x, %w bias(%b) : (tensor<16x48xbf16>, tensor<32x3x4x4xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// An [in, out] weight is copied transposed, then runs the plain kernel.
// CHECK-LABEL: func.func @in_out_linear(
// CHECK: %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<80x32xbf16>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c32
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %c80
// CHECK: %[[V:.*]] = memref.load %arg2[%[[K]], %[[N]]] : memref<32x80xbf16>
// CHECK: memref.store %[[V]], %[[T]][%[[N]], %[[K]]] : memref<80x32xbf16>
// CHECK: call @sgc_dispatch_linear_80x32_bf16_bf16_dot(%arg0, %{{.*}}, %[[T]], %{{.*}})
func.func @in_out_linear(%x: tensor<4x32xbf16>, %w: tensor<32x80xbf16>) -> tensor<4x80xbf16> {
  %y = sg.linear %x, %w {weight_layout = "in_out"} : (tensor<4x32xbf16>, tensor<32x80xbf16>) -> tensor<4x80xbf16>
  return %y : tensor<4x80xbf16>
}

// LayerNorm: mean, then the biased variance of (x - mean), rsqrt(var + eps),
// (x - mean)·r·w + b and one truncf.
// CHECK-LABEL: func.func @layer_norm(
// CHECK: %[[D:.*]] = arith.constant 3.200000e+01 : f32
// CHECK: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[D]] : f32
// CHECK: %[[SQ:.*]] = scf.for
// CHECK: %[[C:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK: arith.mulf %[[C]], %[[C]] : f32
// CHECK: %[[VAR:.*]] = arith.divf %[[SQ]], %[[D]] : f32
// CHECK: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK: %[[R:.*]] = math.rsqrt %[[VE]] : f32
// CHECK: %[[C2:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK: %[[N:.*]] = arith.mulf %[[C2]], %[[R]] : f32
// CHECK: %[[WF:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[BF:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[NW:.*]] = arith.mulf %[[N]], %[[WF]] : f32
// CHECK: %[[Y:.*]] = arith.addf %[[NW]], %[[BF]] : f32
// CHECK-NOT: arith.truncf
// CHECK: arith.truncf %[[Y]] : f32 to bf16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @layer_norm(%x: tensor<16x32xbf16>, %w: tensor<32xbf16>, %b: tensor<32xbf16>) -> tensor<16x32xbf16> {
  %n = sg.layer_norm %x, %w, %b {eps = 1.0e-6 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  return %n : tensor<16x32xbf16>
}

// affine: x·2 then −1 in f32, one truncf to the result type.
// CHECK-LABEL: func.func @affine(
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK: %[[M:.*]] = arith.mulf %[[IN]], %{{.*}} : f32
// CHECK: %[[A:.*]] = arith.addf %[[M]], %{{.*}} : f32
// CHECK: arith.truncf %[[A]] : f32 to bf16
func.func @affine(%x: tensor<18x48xf32>) -> tensor<18x48xbf16> {
  %y = sg.affine %x {scale = 2.0 : f64, shift = -1.0 : f64} : (tensor<18x48xf32>) -> tensor<18x48xbf16>
  return %y : tensor<18x48xbf16>
}

// CHECK-LABEL: func.func @encoder_attn(
// CHECK: call @sgc_dispatch_encoder_attn_4x2x12x12_bf16_mask_3FF0000000000000(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, memref<?x4x12xbf16>, memref<?x2x12xbf16>, memref<?x2x12xbf16>, memref<?x2xi32>, memref<?x4x12xbf16>) -> ()
func.func @encoder_attn(%q: tensor<18x4x12xbf16>, %k: tensor<18x2x12xbf16>, %v: tensor<18x2x12xbf16>, %p: tensor<18x2xi32>) -> tensor<18x4x12xbf16> {
  %a = sg.encoder_attn %q, %k, %v mask(%p) {scale = 1.0 : f64} : (tensor<18x4x12xbf16>, tensor<18x2x12xbf16>, tensor<18x2x12xbf16>, tensor<18x2xi32>) -> tensor<18x4x12xbf16>
  return %a : tensor<18x4x12xbf16>
}

// Axial RoPE: each token's column, then its row, as signed f32 positions;
// cos/sin rounded to bf16; the two quarters of a half paired (j, j + 3).
// CHECK-LABEL: func.func @axial_rope(
// CHECK: memref.get_global @[[$INV]]
// CHECK: %[[PX:.*]] = memref.load %arg2[%{{.*}}, %c0{{.*}}] : memref<18x2xi32>
// CHECK: arith.sitofp %[[PX]] : i32 to f32
// CHECK: scf.for %[[J:[a-z0-9]+]] = %c0 to %c3
// CHECK: math.cos
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[J2:.*]] = arith.addi %[[J]], %c3{{.*}} : index
// CHECK: memref.load %arg1[%{{.*}}, %{{.*}}, %[[J]]]
// CHECK: memref.load %arg1[%{{.*}}, %{{.*}}, %[[J2]]]
// CHECK: %[[PY:.*]] = memref.load %arg2[%{{.*}}, %c1{{.*}}] : memref<18x2xi32>
// CHECK: arith.sitofp %[[PY]] : i32 to f32
// CHECK: %[[K:.*]] = arith.addi %{{.*}}, %c6{{.*}} : index
// CHECK: arith.addi %[[K]], %c3{{.*}} : index
func.func @axial_rope(%x: tensor<18x2x12xbf16>, %p: tensor<18x2xi32>) -> tensor<18x2x12xbf16> {
  %r = sg.axial_rope %x at %p {theta = 100.0 : f64} : tensor<18x2x12xbf16>, tensor<18x2xi32>
  return %r : tensor<18x2x12xbf16>
}

// Gemma 4's position embedding: padding (or an index outside the table)
// reads row 0 and adds 0; the two table rows are summed and rounded, then
// added to x and rounded.
// CHECK-LABEL: func.func @position_embedding(
// CHECK: %[[X:.*]] = arith.select %[[VALID:.*]], %{{.*}}, %c0 : index
// CHECK: %[[Y:.*]] = arith.select %[[VALID]], %{{.*}}, %c0 : index
// CHECK: memref.load %arg2[%c0, %[[X]], %{{.*}}] : memref<2x8x32xbf16>
// CHECK: memref.load %arg2[%c1, %[[Y]], %{{.*}}] : memref<2x8x32xbf16>
// CHECK: %[[S:.*]] = arith.addf
// CHECK: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: %[[RF:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.select %[[VALID]], %[[RF]], %{{.*}} : f32
// CHECK: %[[H:.*]] = arith.addf %{{.*}}, %[[P]] : f32
// CHECK: arith.truncf %[[H]] : f32 to bf16
func.func @position_embedding(%x: tensor<18x32xbf16>, %t: tensor<2x8x32xbf16>, %p: tensor<18x2xi32>) -> tensor<18x32xbf16> {
  %h = sg.add_position_embedding %x, %t at %p : (tensor<18x32xbf16>, tensor<2x8x32xbf16>, tensor<18x2xi32>) -> tensor<18x32xbf16>
  return %h : tensor<18x32xbf16>
}

// 2x2 average pool of a 4x4 grid: one f32 accumulator over (ky, kx), one
// division by 4, one truncf.
// CHECK-LABEL: func.func @avg_pool(
// CHECK: %[[AREA:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (f32)
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[AREA]] : f32
// CHECK-NEXT: arith.truncf %[[MEAN]] : f32 to bf16
func.func @avg_pool(%x: tensor<16x32xbf16>) -> tensor<4x32xbf16> {
  %p = sg.avg_pool_2d %x {kernel = 2 : i64} : tensor<16x32xbf16> -> tensor<4x32xbf16>
  return %p : tensor<4x32xbf16>
}

// Position pool: Wp from the largest column, bins of 3x3, each patch added
// as x·f32(1/9) to an f32 accumulator, bins past the result dropped, one
// truncf at the end.
// CHECK-LABEL: func.func @position_pool(
// CHECK: %[[WP:.*]] = scf.for
// CHECK: arith.maxsi
// CHECK: %[[STRIDE:.*]] = arith.divui %[[WP]], %c3 : index
// CHECK: %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x32xf32>
// CHECK: %[[NINTH:.*]] = arith.constant 0.111111112 : f32
// CHECK: %[[ROW:.*]] = arith.divsi %{{.*}}, %c3 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[STRIDE]], %[[ROW]] : index
// CHECK: %[[COL:.*]] = arith.divsi %{{.*}}, %c3 : index
// CHECK: %[[BIN:.*]] = arith.addi %[[COL]], %[[OFF]] : index
// CHECK: arith.cmpi slt, %[[BIN]], %c2 : index
// CHECK: scf.if
// CHECK: %[[W:.*]] = arith.mulf %{{.*}}, %[[NINTH]] : f32
// CHECK: arith.addf %{{.*}}, %[[W]] : f32
// CHECK: memref.store %{{.*}}, %[[ACC]][%[[BIN]], %{{.*}}] : memref<2x32xf32>
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @position_pool(%x: tensor<18x32xbf16>, %p: tensor<18x2xi32>) -> tensor<2x32xbf16> {
  %y = sg.position_pool %x at %p {kernel = 3 : i64} : (tensor<18x32xbf16>, tensor<18x2xi32>) -> tensor<2x32xbf16>
  return %y : tensor<2x32xbf16>
}

// Standardize: (x·√32 − b)·s in f32, one truncf.
// CHECK-LABEL: func.func @standardize(
// CHECK: %[[PRE:.*]] = arith.constant 5.65685415 : f32
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[B:.*]]: bf16, %[[S:.*]]: bf16, %{{.*}}: bf16):
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[XS:.*]] = arith.mulf %[[XF]], %[[PRE]] : f32
// CHECK: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[D:.*]] = arith.subf %[[XS]], %[[BF]] : f32
// CHECK: %[[SF:.*]] = arith.extf %[[S]] : bf16 to f32
// CHECK: %[[Y:.*]] = arith.mulf %[[D]], %[[SF]] : f32
// CHECK-NEXT: arith.truncf %[[Y]] : f32 to bf16
func.func @standardize(%x: tensor<2x32xbf16>, %b: tensor<32xbf16>, %s: tensor<32xbf16>) -> tensor<2x32xbf16> {
  %y = sg.standardize %x bias(%b) scale(%s) {pre_scale = 5.656854249492381 : f64} : (tensor<2x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  return %y : tensor<2x32xbf16>
}

// merge_image_rows: rows with block >= 0 take round(soft token), the others
// keep x; the select is on f32 and one truncf rounds (a bf16 select would
// become a __truncsfbf2 call on x86).
// CHECK-LABEL: func.func @merge_image_rows(
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[E:.*]]: f32, %[[B:.*]]: i32, %{{.*}}: bf16):
// CHECK: %[[IMG:.*]] = arith.cmpi sge, %[[B]], %{{.*}} : i32
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[S:.*]] = arith.select %[[IMG]], %[[E]], %[[XF]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: linalg.yield %[[R]] : bf16
func.func @merge_image_rows(%x: tensor<6x32xbf16>, %e: tensor<6x32xf32>, %b: tensor<6xi32>) -> tensor<6x32xbf16> {
  %m = sg.merge_image_rows %x, %e rows(%b) : (tensor<6x32xbf16>, tensor<6x32xf32>, tensor<6xi32>) -> tensor<6x32xbf16>
  return %m : tensor<6x32xbf16>
}


// The biased kernel: the tile paths add 16 biases to 16 f32 sums and the
// row path one, each before the one truncf.
// CHECK-LABEL: func.func @sgc_linear_32x32_bf16_bf16_dot_bbf16(
// CHECK-SAME: %{{.*}}: memref<32xbf16>, %{{.*}}: memref<?x32xbf16>, %{{.*}}: index, %{{.*}}: index)
// CHECK: %[[BV:.*]] = vector.load %arg3[%{{.*}}] : memref<32xbf16>, vector<16xbf16>
// CHECK: %[[BVF:.*]] = arith.extf %[[BV]] : vector<16xbf16> to vector<16xf32>
// CHECK: %[[SV:.*]] = arith.addf %{{.*}}, %[[BVF]] : vector<16xf32>
// CHECK: arith.truncf %[[SV]] : vector<16xf32> to vector<16xbf16>
// CHECK: %[[B:.*]] = memref.load %arg3[%{{.*}}] : memref<32xbf16>
// CHECK: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[BF]] : f32
// CHECK: arith.truncf %[[S]] : f32 to bf16
// CHECK-LABEL: func.func private @sgc_dispatch_linear_32x32_bf16_bf16_dot_bbf16(!llvm.ptr, memref<?x32xf32>, memref<?x32xbf16>, memref<32x32xbf16>, memref<32xbf16>, memref<?x32xbf16>)

// The encoder attention kernel: a key whose column is negative scores −inf
// (no dot product), its exponential is exactly 0, and a query with no
// visible key gets 0 instead of 0/0.
// CHECK-LABEL: func.func @sgc_encoder_attn_4x2x12x12_bf16_mask_3FF0000000000000(
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PX:.*]] = memref.load %arg3[%{{.*}}, %c0{{.*}}] : memref<?x2xi32>
// CHECK: %[[PAD:.*]] = arith.cmpi slt, %[[PX]], %c0_i32 : i32
// CHECK: scf.if %[[PAD]] -> (f32) {
// CHECK-NEXT: scf.yield %[[NEGINF]] : f32
// CHECK: } else {
// CHECK: vector.reduction <add>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[MASKED:.*]] = arith.cmpf oeq, %{{.*}}, %[[NEGINF]] : f32
// CHECK: %[[E:.*]] = math.exp
// CHECK: arith.select %[[MASKED]], %{{.*}}, %[[E]] : f32
// CHECK: %[[ANY:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[INV:.*]] = arith.divf
// CHECK: arith.select %[[ANY]], %[[INV]], %{{.*}} : f32
// CHECK-LABEL: func.func private @sgc_dispatch_encoder_attn_4x2x12x12_bf16_mask_3FF0000000000000(
// CHECK-SAME: sg.parallel_rows = 2 : i64, sg.rows = 4 : i64

