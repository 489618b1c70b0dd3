// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s
// The cpu_elementwise family on its own: a post-norm, residual add, layer
// scalar and softcap chain of rows. Each op computes in f32 and rounds once
// to bf16 where the reference rounds; the last op writes straight into the
// output argument; the temporaries are freed before the return.

// CHECK-LABEL: func.func @rows(%arg0: !llvm.ptr, %arg1: memref<?x32xbf16>, %arg2: memref<?x32xbf16>, %arg3: memref<32xbf16>, %arg4: memref<1xbf16>, %arg5: memref<?x32xbf16>)
// CHECK-SAME: sg.result_slots = [-1]
// RMSNorm, a row at a time: the sum of squares in 16-lane vectors, one
// reassociating reduction, rsqrt(sum / 32 + eps), then x·r·(1 + w) rounded.
// CHECK: %[[NORM:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x32xbf16>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[TOTAL:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[SUM]]) -> (f32) {
// CHECK: %[[WIDTH:.*]] = arith.constant 3.200000e+01 : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[TOTAL]], %[[WIDTH]] : f32
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT: %[[VAR:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK-NEXT: %[[R:.*]] = math.rsqrt %[[VAR]] : f32
// CHECK: %[[W:.*]] = vector.load %arg3[%{{.*}}] : memref<32xbf16>, vector<16xbf16>
// CHECK-NEXT: %[[X:.*]] = vector.load %arg1[%[[ROW]], %{{.*}}] : memref<?x32xbf16>, vector<16xbf16>
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[X]] : vector<16xbf16> to vector<16xf32>
// CHECK-NEXT: %[[RB:.*]] = vector.broadcast %[[R]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[XR:.*]] = arith.mulf %[[XF]], %[[RB]] : vector<16xf32>
// CHECK-NEXT: %[[WF:.*]] = arith.extf %[[W]] : vector<16xbf16> to vector<16xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[W1:.*]] = arith.addf %[[ONE]], %[[WF]] : vector<16xf32>
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[XR]], %[[W1]] : vector<16xf32>
// CHECK-NEXT: %[[NR:.*]] = arith.truncf %[[N]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: vector.store %[[NR]], %[[NORM]][%[[ROW]], %{{.*}}]
// The residual add: both sides widened, one rounding.
// CHECK: %[[SUMROWS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x32xbf16>
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg2, %[[NORM]] : memref<?x32xbf16>, memref<?x32xbf16>) outs(%[[SUMROWS]] : memref<?x32xbf16>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[AF]], %[[BF]] : f32
// CHECK-NEXT: %[[SR:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[SR]] : bf16
// The layer scalar, loaded once.
// CHECK: %[[SC:.*]] = memref.load %arg4[%{{.*}}] : memref<1xbf16>
// CHECK-NEXT: %[[SCF:.*]] = arith.extf %[[SC]] : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%[[SUMROWS]] : memref<?x32xbf16>) outs(%[[SCALED:.*]] : memref<?x32xbf16>) {
// CHECK: arith.mulf %{{.*}}, %[[SCF]] : f32
// The softcap in three rounded steps, round(round(tanh(round(v / cap))) · cap),
// into the output argument.
// CHECK: linalg.generic {{.*}} ins(%[[SCALED]] : memref<?x32xbf16>) outs(%arg5 : memref<?x32xbf16>) {
// CHECK-NEXT: ^bb0(%[[V:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 3.000000e+01 : f32
// CHECK-NEXT: %[[VF:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[VF]], %[[CAP]] : f32
// CHECK-NEXT: %[[DR:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT: %[[DF:.*]] = arith.extf %[[DR]] : bf16 to f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[DF]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT: %[[TF:.*]] = arith.extf %[[TR]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[TF]], %[[CAP]] : f32
// CHECK-NEXT: %[[MR:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[MR]] : bf16
// CHECK: memref.dealloc %[[NORM]]
// CHECK-NEXT: memref.dealloc %[[SUMROWS]]
// CHECK-NEXT: memref.dealloc %[[SCALED]]
// CHECK-NEXT: return
func.func @rows(%x: tensor<?x32xbf16>, %y: tensor<?x32xbf16>, %n: tensor<32xbf16>, %s: tensor<1xbf16>) -> tensor<?x32xbf16> {
  %p = sg.rms_norm %x, %n {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  %r = sg.add %y, %p : tensor<?x32xbf16>
  %l = sg.layer_scalar %r, %s : tensor<?x32xbf16>, tensor<1xbf16>
  %c = sg.softcap %l {cap = 30.0 : f64} : tensor<?x32xbf16>
  return %c : tensor<?x32xbf16>
}
