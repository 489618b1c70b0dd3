// RUN: sgc-opt %s -split-input-file -sg-plan-kv-cache -verify-diagnostics | FileCheck %s

// One sliding layer (a ring of window = 4 slots) and one full layer whose V
// comes from K (slots = context 512). Bytes per token = kv heads x (D + Dv)
// x 2 B: 2 x 32 x 2 = 128 and 1 x 128 x 2 = 256.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: sg.kv_context_length = 512
// CHECK-SAME: sg.kv_plan = [{bytes_per_token = 128 : i64, head_dim = 16 : i64, kind = "ring", kv_heads = 2 : i64, layer = 0 : i64, slots = 4 : i64, v_head_dim = 16 : i64}, {bytes_per_token = 256 : i64, head_dim = 64 : i64, kind = "full", kv_heads = 1 : i64, layer = 1 : i64, slots = 512 : i64, v_from_k, v_head_dim = 64 : i64}]
// Planned: 4 x 128 + 512 x 256 = 131584 B; naive: 512 x (128 + 256) = 196608 B.
// expected-remark @+1 {{KV cache plan of @forward: 131584 B at context 512 (naive 196608 B)}}
func.func @forward(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>,
                   %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>,
                   %qf: tensor<?x4x64xbf16>, %kf: tensor<?x1x64xbf16>,
                   %kcf: tensor<512x1x64xbf16>, %vcf: tensor<512x1x64xbf16>, %pos: i64)
    -> (tensor<?x4x16xbf16>, tensor<?x4x64xbf16>) {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 4 : i64, scale = 0.0625 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  %f = sg.full_attn %qf, %kf, %kf cache(%kcf, %vcf) at %pos {scale = 1.0 : f64, v_from_k}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  return %a, %f : tensor<?x4x16xbf16>, tensor<?x4x64xbf16>
}

// -----
// @negative_no_attention: functions without attention get no plan.
// CHECK-LABEL: func.func @negative_no_attention
// CHECK-NOT: sg.kv_plan
func.func @negative_no_attention(%x: tensor<?x96xbf16>) -> tensor<?x96xbf16> {
  return %x : tensor<?x96xbf16>
}

// -----
// f32 caches take 4 bytes per element.
// CHECK-LABEL: func.func @f32_cache
// CHECK-SAME: bytes_per_token = 256 : i64
// expected-remark @+1 {{KV cache plan of @f32_cache: 1024 B at context 0 (naive 0 B)}}
func.func @f32_cache(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %kc: tensor<4x2x16xf32>, %pos: i64) -> tensor<?x4x16xf32> {
  %a = sg.sliding_attn %q, %k, %k cache(%kc, %kc) at %pos {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, i64) -> tensor<?x4x16xf32>
  return %a : tensor<?x4x16xf32>
}
