// RUN: sgc-opt %s -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// A V-only full layer (keys_from_values, issue 37): the kernel takes the one
// cache twice and k_norm's weight after the position, and gets its own name
// (16 rotated pairs of 64, basis 64, the weight's type, theta 1e4).
// CHECK-LABEL: func.func @attn(
// CHECK: call @sgc_dispatch_attn_full_4x1x64x64_s512_bf16_bf16_{{[0-9A-F]+}}_kfv16b64_bf16_40C3880000000000(%arg0, %arg1, %arg2, %arg2, %arg3, %arg3, %{{.*}}, %arg4, %arg6)

// CHECK-LABEL: func.func @sgc_attn_full_4x1x64x64_s512_bf16_bf16_{{[0-9A-F]+}}_kfv16b64_bf16_40C3880000000000(
// CHECK-SAME: %[[V:[a-z0-9]+]]: memref<?x1x64xbf16>, %{{[a-z0-9]+}}: memref<512x1x64xbf16>, %[[CACHE:[a-z0-9]+]]: memref<512x1x64xbf16>, %{{[a-z0-9]+}}: memref<1xi64>, %[[W:[a-z0-9]+]]: memref<64xbf16>
// CHECK: %[[FREQ:.*]] = memref.get_global @sgc_rope_inv_freq_32_{{[0-9A-F]+}} : memref<32xf32>

// The chunk's keys, rebuilt from its values once a call: round(v · w) ...
// CHECK: %[[CHUNK:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x1x64xbf16>
// CHECK: %[[VROW:.*]] = vector.load %[[V]][{{.*}}] : memref<?x1x64xbf16>, vector<16xbf16>
// CHECK: %[[WROW:.*]] = vector.load %[[W]][{{.*}}] : memref<64xbf16>, vector<16xbf16>
// CHECK: %[[VF:.*]] = arith.extf %[[VROW]] : vector<16xbf16> to vector<16xf32>
// CHECK: %[[VN:.*]] = arith.mulf %[[VF]], %{{.*}} : vector<16xf32>
// CHECK: %[[WF:.*]] = arith.extf %[[WROW]] : vector<16xbf16> to vector<16xf32>
// CHECK: %[[KN:.*]] = arith.mulf %[[VN]], %[[WF]] : vector<16xf32>
// CHECK: %[[KB:.*]] = arith.truncf %[[KN]] : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %[[KB]], %[[CHUNK]]
// ... then the rotation of the 16 rotated pairs, one vector: the angle in
// f32, reduced by pi/2 in f64 (two FMAs), cos and sin rounded to bf16.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step %c16
// CHECK: %[[F:.*]] = vector.load %[[FREQ]]
// CHECK: %[[ANGLE:.*]] = arith.mulf %{{.*}}, %[[F]] : vector<16xf32>
// CHECK: %[[X:.*]] = arith.extf %[[ANGLE]] : vector<16xf32> to vector<16xf64>
// CHECK: math.fma %[[X]], %{{.*}}, %{{.*}} : vector<16xf64>
// CHECK: math.floor
// CHECK: arith.constant dense<1.5707963267948966> : vector<16xf64>
// CHECK: arith.constant dense<6.123233995736766E-17> : vector<16xf64>
// CHECK: arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>

// Cached keys: per kv head (ceil(head_end / group) of them from
// head_begin / group) and block of query rows (up to 16, scores within
// 16 MiB), one key row rebuilt from the cache at a time and scored against
// the block's rows and the kv head's query heads; each (row, head)'s
// softmax reads its row of the block's scores.
// CHECK: %[[FIT:.*]] = arith.minui %c16{{.*}}, %{{.*}} : index
// CHECK: %[[ATLEAST1:.*]] = arith.maxui %c1{{.*}}, %[[FIT]] : index
// CHECK: %[[ROWS:.*]] = arith.minui %{{.*}}, %[[ATLEAST1]] : index
// CHECK: %[[SCORES:.*]] = memref.alloc(%[[ROWS]], %{{.*}}) {alignment = 64 : i64} : memref<?x4x?xf32>
// CHECK: %[[KEY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xbf16>
// CHECK: arith.ceildivui %{{.*}}, %c4{{.*}} : index
// CHECK: arith.ceildivui %{{.*}}, %[[ROWS]] : index
// CHECK: vector.load %[[CACHE]][{{.*}}] : memref<512x1x64xbf16>, vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[KEY]][{{.*}}] : memref<64xbf16>, vector<16xbf16>
// CHECK: memref.subview %[[SCORES]][{{.*}}, {{.*}}, 0] [1, 1, {{.*}}] [1, 1, 1] : memref<?x4x?xf32> to memref<?xf32, strided<[1], offset: ?>>
func.func @attn(%q: tensor<?x4x64xbf16>, %v: tensor<?x1x64xbf16>, %c: tensor<512x1x64xbf16>, %w: tensor<64xbf16>, %pos: i64) -> tensor<?x4x64xbf16> {
  %a = sg.full_attn %q, %v, %v cache(%c, %c) at %pos keys_from_values(%w)
      {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+04 : f64, key_rotary_fraction = 0.5 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}
