// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s
// The cpu_norm_rope family on its own: a chunk of k heads normalized
// (Gemma's 1 + w), rotated and written into a ring of 8 slots. Each
// rounding is the reference's: cos and sin of the f32 angle rounded to
// bf16, the normalized element rounded, each product and sum of the
// rotation rounded. The chunk's cache write comes after the nest, and only
// its last 8 tokens reach the ring.

// The new cache is the argument updated in place (slot 3), the rotated
// keys an appended output.
// CHECK-LABEL: func.func @qk(%arg0: !llvm.ptr, %arg1: memref<?x2x16xbf16>, %arg2: memref<16xbf16>, %arg3: i64, %arg4: memref<8x2x16xbf16>, %arg5: memref<?x2x16xbf16>)
// CHECK-SAME: sg.result_slots = [-1, 3]
// CHECK: %[[INV:.*]] = memref.get_global @sgc_rope_inv_freq_8_{{.*}} : memref<8xf32>
// CHECK: %[[P:.*]] = arith.index_cast %arg3 : i64 to index
// CHECK: %[[XN:.*]] = memref.alloca() : memref<16xf32>
// CHECK: %[[CS:.*]] = memref.alloca() : memref<8x2xf32>
// A token's angles: f32(pos + t) · inv[k].
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[PT:.*]] = arith.addi %[[P]], %[[T]] : index
// CHECK-NEXT: %[[PT64:.*]] = arith.index_cast %[[PT]] : index to i64
// CHECK-NEXT: %[[PF:.*]] = arith.uitofp %[[PT64]] : i64 to f32
// CHECK: %[[F:.*]] = memref.load %[[INV]][%[[K:.*]]] : memref<8xf32>
// CHECK-NEXT: %[[ANGLE:.*]] = arith.mulf %[[PF]], %[[F]] : f32
// CHECK-NEXT: %[[C:.*]] = math.cos %[[ANGLE]] : f32
// CHECK-NEXT: %[[CR:.*]] = arith.truncf %[[C]] : f32 to bf16
// CHECK-NEXT: %[[CF:.*]] = arith.extf %[[CR]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = math.sin %[[ANGLE]] : f32
// CHECK-NEXT: %[[SR:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SR]] : bf16 to f32
// CHECK: math.rsqrt
// The normalized element, rounded, kept in f32 for the rotation.
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[W1:.*]] = arith.addf %[[ONE]], %{{.*}} : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %{{.*}}, %[[W1]] : f32
// CHECK-NEXT: %[[NR:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK-NEXT: %[[NF:.*]] = arith.extf %[[NR]] : bf16 to f32
// CHECK-NEXT: memref.store %[[NF]], %[[XN]][
// The rotated pair: lo·c − hi·s and hi·c + lo·s, every product and sum
// rounded.
// CHECK: %[[LO:.*]] = memref.load %[[XN]][%[[J:.*]]] : memref<16xf32>
// CHECK-NEXT: %[[HI:.*]] = memref.load %[[XN]][%[[J2:.*]]] : memref<16xf32>
// CHECK-DAG: %[[HS:.*]] = arith.mulf %[[HI]], %[[SIN:.*]] : f32
// CHECK-DAG: %[[LC:.*]] = arith.mulf %[[LO]], %[[COS:.*]] : f32
// CHECK-DAG: %[[LS:.*]] = arith.mulf %[[LO]], %[[SIN]] : f32
// CHECK-DAG: %[[HC:.*]] = arith.mulf %[[HI]], %[[COS]] : f32
// CHECK-DAG: %[[HSR:.*]] = arith.truncf %[[HS]] : f32 to bf16
// CHECK-DAG: %[[LCR:.*]] = arith.truncf %[[LC]] : f32 to bf16
// CHECK-DAG: %[[LSR:.*]] = arith.truncf %[[LS]] : f32 to bf16
// CHECK-DAG: %[[HCR:.*]] = arith.truncf %[[HC]] : f32 to bf16
// CHECK-DAG: %[[HSF:.*]] = arith.extf %[[HSR]] : bf16 to f32
// CHECK-DAG: %[[LCF:.*]] = arith.extf %[[LCR]] : bf16 to f32
// CHECK-DAG: %[[LSF:.*]] = arith.extf %[[LSR]] : bf16 to f32
// CHECK-DAG: %[[HCF:.*]] = arith.extf %[[HCR]] : bf16 to f32
// CHECK-DAG: %[[Y0:.*]] = arith.subf %[[LCF]], %[[HSF]] : f32
// CHECK-DAG: %[[Y1:.*]] = arith.addf %[[HCF]], %[[LSF]] : f32
// CHECK-DAG: %[[Y0R:.*]] = arith.truncf %[[Y0]] : f32 to bf16
// CHECK-DAG: %[[Y1R:.*]] = arith.truncf %[[Y1]] : f32 to bf16
// CHECK: memref.store %[[Y0R]], %arg5[%{{.*}}, %{{.*}}, %[[J]]]
// CHECK-NEXT: memref.store %[[Y1R]], %arg5[%{{.*}}, %{{.*}}, %[[J2]]]
// The ring write after the nest: tokens [max(0, n - 8), n) to slot
// (pos + t) mod 8.
// CHECK: %[[NTOK:.*]] = memref.dim %arg5, %{{.*}} : memref<?x2x16xbf16>
// CHECK-NEXT: %[[P2:.*]] = arith.index_cast %arg3 : i64 to index
// CHECK-NEXT: %[[W8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[LAST8:.*]] = arith.subi %[[NTOK]], %[[W8]] : index
// CHECK-NEXT: %[[GT:.*]] = arith.cmpi sgt, %[[LAST8]], %{{.*}} : index
// CHECK-NEXT: %[[FROM:.*]] = arith.select %[[GT]], %[[LAST8]], %{{.*}} : index
// CHECK: scf.for %[[T2:.*]] = %[[FROM]] to %[[NTOK]] step %{{.*}} {
// CHECK-NEXT: %[[PT2:.*]] = arith.addi %[[P2]], %[[T2]] : index
// CHECK-NEXT: %[[R8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[PT2]], %[[R8]] : index
// CHECK: %[[V:.*]] = memref.load %arg5[%[[T2]], %[[H:.*]], %[[D:.*]]] : memref<?x2x16xbf16>
// CHECK-NEXT: memref.store %[[V]], %arg4[%[[SLOT]], %[[H]], %[[D]]] : memref<8x2x16xbf16>
func.func @qk(%x: tensor<?x2x16xbf16>, %w: tensor<16xbf16>, %pos: i64, %kc: tensor<8x2x16xbf16>) -> (tensor<?x2x16xbf16>, tensor<8x2x16xbf16>) {
  %k, %kc2 = sg.norm_rope %x norm(%w) at %pos into %kc {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64, window = 8 : i64}
      : (tensor<?x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<?x2x16xbf16>, tensor<8x2x16xbf16>)
  return %k, %kc2 : tensor<?x2x16xbf16>, tensor<8x2x16xbf16>
}
