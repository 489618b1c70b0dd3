// RUN: sgc compile %s --target=cuda:sm_90a --compile-to=lower -o - | FileCheck %s --check-prefix=BF16
// RUN: sed -e 's/xbf16>/xf32>/g' -e 's/tensor<32xf32>/tensor<32xbf16>/' %s > %t.f32.mlir
// RUN: sgc compile %t.f32.mlir --target=cuda:sm_90a --compile-to=lower -o - | FileCheck %s --check-prefix=F32
// F16 weights on CUDA: under bf16 activations every family reads an f16
// weight as bf16(w) (the reference casts an F16 checkpoint to bf16), under
// f32 activations exactly (the second run: the same module with f32
// activations). The e2e golden (tiny-gemma3-f16) cannot see the
// rounding in the decode projections: without it they stay inside the bf16
// bound, so the kernels' IR is checked here.

// The embedding: f16 row, rounded to bf16, widened, scaled.
// BF16-LABEL: gpu.func @embed_0(
// BF16: %[[E:.*]] = memref.load %{{.*}} : memref<48x64xf16>
// BF16: %[[E32:.*]] = arith.extf %[[E]] : f16 to f32
// BF16-NEXT: %[[EB:.*]] = arith.truncf %[[E32]] : f32 to bf16
// BF16-NEXT: arith.extf %[[EB]] : bf16 to f32
// Decode's projection: the same per 8-wide chunk, before its FMA.
// BF16-LABEL: gpu.func @gemv_rows_0(
// BF16: %[[W:.*]] = vector.load %{{.*}} : memref<32x64xf16>, vector<8xf16>
// BF16: %[[W32:.*]] = arith.extf %[[W]] : vector<8xf16> to vector<8xf32>
// BF16-NEXT: %[[WB:.*]] = arith.truncf %[[W32]] : vector<8xf32> to vector<8xbf16>
// BF16-NEXT: %[[WW:.*]] = arith.extf %[[WB]] : vector<8xbf16> to vector<8xf32>
// BF16-NEXT: vector.fma %[[WW]]
// Prefill's tensor-core projection: f16 chunks become bf16 entering shared
// memory.
// BF16-LABEL: gpu.func @gemm_mma_0(
// BF16: %[[C32:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// BF16-NEXT: %[[CB:.*]] = arith.truncf %[[C32]] : vector<8xf32> to vector<8xbf16>
// BF16-NEXT: vector.store %[[CB]], %{{.*}} : memref<32x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>

// F32-LABEL: gpu.func @gemv_rows_0(
// F32: %[[W32:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// F32-NOT: arith.truncf
// F32: vector.fma %[[W32]]
// F32-LABEL: gpu.func @gemm_ffma_0(
// F32: memref<32x64xf16>, vector<4xf16>
// F32-NEXT: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
module {
  func.func @forward(%tokens: tensor<?xi32>, %pos0: i64) -> tensor<?x32xbf16> {
    %e = sg.weight "embed" : tensor<48x64xf16>
    %x = sg.embed %e[%tokens] scale(2.0) {sg.block = "embed"} : (tensor<48x64xf16>, tensor<?xi32>) -> tensor<?x64xbf16>
    %w = sg.weight "w" : tensor<32x64xf16>
    %y = sg.linear %x, %w {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x64xbf16>, tensor<32x64xf16>) -> tensor<?x32xbf16>
    %n = sg.weight "out_norm" : tensor<32xbf16>
    %z = sg.rms_norm %y, %n {sg.block = "layer", sg.layer = 0 : i64, eps = 1.0e-06 : f64, weight_offset = 0 : i64} : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
    return %z : tensor<?x32xbf16>
  }
}
