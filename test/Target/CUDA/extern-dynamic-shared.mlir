// RUN: sgc-opt %s --pass-pipeline='builtin.module(gpu.module(sgc-extern-dynamic-shared))' | FileCheck %s
// sgc-extern-dynamic-shared gives the zero-length shared array that
// gpu.dynamic_shared_memory lowers to external linkage (PTX `.extern
// .shared`); a static shared buffer and a global keep theirs.

// CHECK-LABEL: gpu.module @sgc_kernels
// CHECK-DAG: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32{{.*}}} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @tile() {addr_space = 3 : i32{{.*}}} : !llvm.array<64 x i8>
// CHECK-DAG: llvm.mlir.global internal constant @table(dense<0> : tensor<4xi8>) {addr_space = 0 : i32} : !llvm.array<4 x i8>
gpu.module @sgc_kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
  llvm.mlir.global internal constant @table(dense<0> : tensor<4xi8>) {addr_space = 0 : i32} : !llvm.array<4 x i8>
}
