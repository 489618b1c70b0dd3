// The attention ops that block-mask-run.test runs: 8 tokens at
// position 2, two query heads over one kv head, head width 4, f32 (no
// rounding between the steps).
func.func @sliding(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<3x1x4xf32>, %vc: tensor<3x1x4xf32>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x2x4xf32> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos blocks(%blocks) {window = 3 : i64, scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<3x1x4xf32>, tensor<3x1x4xf32>, i64, tensor<?xi32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

func.func @full(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<16x1x4xf32>, %vc: tensor<16x1x4xf32>, %pos: i64, %blocks: tensor<?xi32>) -> tensor<?x2x4xf32> {
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %pos blocks(%blocks) {scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<16x1x4xf32>, tensor<16x1x4xf32>, i64, tensor<?xi32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

func.func @sliding_text(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %kc: tensor<3x1x4xf32>, %vc: tensor<3x1x4xf32>, %pos: i64) -> tensor<?x2x4xf32> {
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos {window = 3 : i64, scale = 0.5 : f64}
      : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<3x1x4xf32>, tensor<3x1x4xf32>, i64) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}
