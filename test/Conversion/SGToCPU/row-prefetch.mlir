// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// The bf16 pair rows (decode) prefetch their weight stream as far ahead as
// the library's i64 @sgc_cpu_row_prefetch_bytes says (written by the
// runtime for its host, not a constant), and not at all where it is 0: the
// kernel reads it once a call, each step's prefetches sit under its test.
// CHECK: llvm.mlir.global external @sgc_cpu_row_prefetch_bytes() {{.*}} : i64
// CHECK-LABEL: func.func @sgc_linear_64x96_bf16_bf16_dot(
// CHECK-SAME: %{{.*}}: memref<?x96xf32>, %{{.*}}: memref<?x96xbf16>, %[[W:[a-z0-9]+]]: memref<64x96xbf16>
// CHECK: %[[ADDR:.*]] = llvm.mlir.addressof @sgc_cpu_row_prefetch_bytes : !llvm.ptr
// CHECK: %[[RAW:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> i64
// CHECK: %[[BYTES:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: %[[ON:.*]] = arith.cmpi ne, %[[BYTES]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[ON]] {
// CHECK: %[[ELEMS:.*]] = arith.divui %[[BYTES]], %{{.*}} : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %{{.*}}, %[[ELEMS]] : index
// CHECK: memref.prefetch %[[W]][%{{.*}}, %{{.*}}], read, locality<3>, data : memref<64x96xbf16>
func.func @proj(%x: tensor<?x96xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
