// RUN: sgc-opt %s -split-input-file -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// bf16 rows and cache: behind the bf16-dot flag, the chunk's value rows are
// packed in pairs once a call (the later row in the even halves), and the
// weighted sum takes the cached keys with an FMA a value and the chunk's keys
// a pair at a time, one vdpbf16ps per 16 columns with the two probabilities'
// bf16 bits as one 32-bit lane (the earlier key's in the high half). Without
// the flag, the FMAs as before. The numbers: test/e2e/tiny-gemma3-bf16.test.
// CHECK-LABEL: func.func @sgc_attn_w8_2x1x32x32_s8_bf16_bf16_3FE0000000000000(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x2x32xbf16>, %{{[a-z0-9]+}}: memref<?x1x32xbf16>, %[[V:[a-z0-9]+]]: memref<?x1x32xbf16>
// CHECK: %[[FLAG:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: %[[PAIRS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x1x64xbf16>
// CHECK: scf.if %[[FLAG]] {
// CHECK: %[[EARLY:.*]] = vector.load %[[V]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x1x32xbf16>, vector<16xbf16>
// CHECK: %[[LATE:.*]] = scf.if %{{.*}} -> (vector<16xbf16>) {
// CHECK: %[[IL:.*]] = vector.interleave %[[LATE]], %[[EARLY]] : vector<16xbf16> -> vector<32xbf16>
// CHECK: vector.store %[[IL]], %[[PAIRS]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x1x64xbf16>, vector<32xbf16>
// The weighted sum of a query row.
// CHECK: scf.if %[[FLAG]] {
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: vector.fma
// CHECK: scf.for %[[R:[a-z0-9]+]] = {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: %[[PE:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: %[[PL:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: %[[HIGH:.*]] = arith.andi %[[PE]], %{{.*}} : i32
// CHECK: %[[LOW:.*]] = arith.shrui %[[PL]], %{{.*}} : i32
// CHECK: %[[PAIR:.*]] = arith.ori %[[HIGH]], %[[LOW]] : i32
// CHECK: %[[LANES:.*]] = vector.broadcast %[[PAIR]] : i32 to vector<16xi32>
// CHECK: %[[P:.*]] = vector.bitcast %[[LANES]] : vector<16xi32> to vector<32xbf16>
// CHECK: %[[V0:.*]] = vector.load %[[PAIRS]][%[[R]], %{{.*}}, %{{.*}}] : memref<?x1x64xbf16>, vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[P]], %[[V0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[V1:.*]] = vector.load %[[PAIRS]][%[[R]], %{{.*}}, %{{.*}}] : memref<?x1x64xbf16>, vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[P]], %[[V1]] : vector<32xbf16> -> vector<16xf32>
// CHECK: } else {
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
// CHECK: memref.dealloc %[[PAIRS]] : memref<?x1x64xbf16>
func.func @sliding(%q: tensor<?x2x32xbf16>, %k: tensor<?x1x32xbf16>, %v: tensor<?x1x32xbf16>, %kc: tensor<8x1x32xbf16>, %vc: tensor<8x1x32xbf16>, %pos: i64) -> tensor<?x2x32xbf16> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 8 : i64, scale = 0.5 : f64}
      : (tensor<?x2x32xbf16>, tensor<?x1x32xbf16>, tensor<?x1x32xbf16>, tensor<8x1x32xbf16>, tensor<8x1x32xbf16>, i64) -> tensor<?x2x32xbf16>
  return %a : tensor<?x2x32xbf16>
}

// -----

// f32 rows: no pairs, no dot.
// CHECK-LABEL: func.func @sgc_attn_w8_2x1x32x32_s8_f32_f32_3FE0000000000000(
// CHECK-NOT: vector.interleave
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @sliding_f32(%q: tensor<?x2x32xf32>, %k: tensor<?x1x32xf32>, %v: tensor<?x1x32xf32>, %kc: tensor<8x1x32xf32>, %vc: tensor<8x1x32xf32>, %pos: i64) -> tensor<?x2x32xf32> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 8 : i64, scale = 0.5 : f64}
      : (tensor<?x2x32xf32>, tensor<?x1x32xf32>, tensor<?x1x32xf32>, tensor<8x1x32xf32>, tensor<8x1x32xf32>, i64) -> tensor<?x2x32xf32>
  return %a : tensor<?x2x32xf32>
}
