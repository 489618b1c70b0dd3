// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s
// The calling convention of a lowered body (what the plan's serializer and
// the CPU glue rely on): the execution context comes first, then the sg
// arguments as memrefs, then one output buffer per result not updated in
// place; every dispatcher takes the context first and gets the body's.

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[EXEC:[a-z0-9]+]]: !llvm.ptr, %[[X:[a-z0-9]+]]: memref<?x8xbf16>, %[[POS:[a-z0-9]+]]: i64, %[[K:[a-z0-9]+]]: memref<4x1x8xbf16>, %[[W:[a-z0-9]+]]: memref<16x8xbf16>, %[[KW:[a-z0-9]+]]: memref<8x8xbf16>, %[[Y:[a-z0-9]+]]: memref<?x16xbf16>)
// The cache result is updated in place (slot 2: the cache is sg argument 2;
// slots count the sg arguments, not the context); the projection has an
// output buffer (-1).
// CHECK-SAME: sg.result_slots = [-1, 2]
// The input rows go to f32 (and bf16, for the bf16 tiles) once per op.
// CHECK: call @sgc_rows_8_bf16_b(%[[X]], %[[XS:.*]], %[[XB:.*]]) :
// CHECK: call @sgc_dispatch_linear_16x8_bf16_bf16_dot(%[[EXEC]], %[[XS]], %[[XB]], %[[W]], %{{.*}})
// CHECK: call @sgc_dispatch_linear_8x8_bf16_bf16_dot(%[[EXEC]],
// CHECK-LABEL: func.func @sgc_linear_16x8_bf16_bf16_dot(
// CHECK-SAME: index, %{{.*}}: index)
// CHECK-LABEL: func.func private @sgc_dispatch_linear_16x8_bf16_bf16_dot(!llvm.ptr, memref<?x8xf32>, memref<?x8xbf16>, memref<16x8xbf16>, memref<?x16xbf16>)
// CHECK-SAME: sg.dispatch = @sgc_linear_16x8_bf16_bf16_dot, sg.rows = 16 : i64
func.func @layer(%x: tensor<?x8xbf16>, %pos: i64, %k: tensor<4x1x8xbf16>, %w: tensor<16x8xbf16>, %kw: tensor<8x8xbf16>)
    -> (tensor<?x16xbf16>, tensor<4x1x8xbf16>) {
  %y = sg.linear %x, %w : (tensor<?x8xbf16>, tensor<16x8xbf16>) -> tensor<?x16xbf16>
  %kp = sg.linear %x, %kw : (tensor<?x8xbf16>, tensor<8x8xbf16>) -> tensor<?x8xbf16>
  %kh = sg.split_heads %kp {heads = 1 : i64} : tensor<?x8xbf16> -> tensor<?x1x8xbf16>
  %k2 = sg.kv_write %kh into %k at %pos {window = 4 : i64} : tensor<?x1x8xbf16> into tensor<4x1x8xbf16>
  return %y, %k2 : tensor<?x16xbf16>, tensor<4x1x8xbf16>
}
