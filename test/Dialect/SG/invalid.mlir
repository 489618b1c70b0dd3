// RUN: sgc-opt %s -split-input-file -verify-diagnostics
// One case per verifier constraint tag of dialects/SG/IR/SGOps.td; the
// function name carries the tag (`grep c3` links spec, code and test).

// weight_c1: a checkpoint tensor needs a name.
func.func @weight_c1_empty_name() -> tensor<4xbf16> {
  // expected-error @+1 {{requires a non-empty checkpoint tensor name}}
  %w = sg.weight "" : tensor<4xbf16>
  return %w : tensor<4xbf16>
}

// -----
// weight_c2: checkpoint tensors have static shapes.
func.func @weight_c2_dynamic_shape() -> tensor<?x4xbf16> {
  // expected-error @+1 {{requires a static shape, got [?, 4]}}
  %w = sg.weight "w" : tensor<?x4xbf16>
  return %w : tensor<?x4xbf16>
}

// -----
// embed_c1: the table is [V, H] and the ids a vector.
func.func @embed_c1_table_rank(%t: tensor<2x512x96xbf16>, %ids: tensor<?xi32>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires a rank-2 table and rank-1 ids, got ranks 3 and 1}}
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<2x512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>
  return %h : tensor<?x96xbf16>
}

// -----
// embed_c2: the result is [len(ids), H].
func.func @embed_c2_result_width(%t: tensor<512x96xbf16>, %ids: tensor<?xi32>) -> tensor<?x80xbf16> {
  // expected-error @+1 {{requires result shape [?, 96], got [?, 80]}}
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x80xbf16>
  return %h : tensor<?x80xbf16>
}

// -----
// embed_c3: the scale is positive.
func.func @embed_c3_scale_zero(%t: tensor<512x96xbf16>, %ids: tensor<?xi32>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires 'scale' > 0, got 0}}
  %h = sg.embed %t[%ids] scale(0.0) : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>
  return %h : tensor<?x96xbf16>
}

// -----
// rms_norm_c1: eps is positive.
func.func @rms_norm_c1_eps_negative(%x: tensor<?x96xbf16>, %w: tensor<96xbf16>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires 'eps' > 0, got -1}}
  %n = sg.rms_norm %x, %w {eps = -1.0 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  return %n : tensor<?x96xbf16>
}

// -----
// rms_norm_c2: the weight offset is 0 (x̂·w) or 1 (x̂·(1+w)).
func.func @rms_norm_c2_offset_two(%x: tensor<?x96xbf16>, %w: tensor<96xbf16>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires 'weight_offset' 0 or 1, got 2}}
  %n = sg.rms_norm %x, %w {eps = 1.0e-6 : f64, weight_offset = 2 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  return %n : tensor<?x96xbf16>
}

// -----
// rms_norm_c3: the weight covers the normalized (last) dimension.
func.func @rms_norm_c3_weight_shape(%x: tensor<?x4x16xbf16>, %w: tensor<64xbf16>) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires a weight of shape [16], got [64]}}
  %n = sg.rms_norm %x, %w {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x4x16xbf16>, tensor<64xbf16>) -> tensor<?x4x16xbf16>
  return %n : tensor<?x4x16xbf16>
}

// -----
// rms_norm_c4: a weightless norm has no offset to add.
func.func @rms_norm_c4_offset_without_weight(%x: tensor<?x96xbf16>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{without a weight requires 'weight_offset' 0, got 1}}
  %n = sg.rms_norm %x {eps = 1.0e-6 : f64, weight_offset = 1 : i64} : (tensor<?x96xbf16>) -> tensor<?x96xbf16>
  return %n : tensor<?x96xbf16>
}

// -----
// rms_norm_c5: the result keeps the input's shape.
func.func @rms_norm_c5_result_shape(%x: tensor<?x96xbf16>) -> tensor<?x95xbf16> {
  // expected-error @+1 {{requires the result shape to equal the input shape [?, 96]}}
  %n = sg.rms_norm %x {eps = 1.0e-6 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>) -> tensor<?x95xbf16>
  return %n : tensor<?x95xbf16>
}

// -----
// linear_c1: the weight is a matrix (or of higher rank).
func.func @linear_c1_weight_rank(%x: tensor<?x96xbf16>, %w: tensor<96xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires a weight of rank >= 2 and an input of rank >= 1, got ranks 1 and 2}}
  %y = sg.linear %x, %w : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// linear_c2: the input width matches the weight's 'in' dimension.
func.func @linear_c2_in_mismatch(%x: tensor<?x80xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{input width 80 does not match weight 'in' dimension 96}}
  %y = sg.linear %x, %w : (tensor<?x80xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// linear_c3: the result width is the weight's 'out' dimension.
func.func @linear_c3_out_mismatch(%x: tensor<?x96xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{requires result shape [?, 64], got [?, 32]}}
  %y = sg.linear %x, %w : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// -----
// split_heads_c1: [tokens, width] -> [tokens, heads, D].
func.func @split_heads_c1_rank(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires a rank-2 flat and a rank-3 split tensor, got ranks 2 and 2}}
  %y = sg.split_heads %x : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// split_heads_c2: heads x D equals the width.
func.func @split_heads_c2_width(%x: tensor<?x64xbf16>) -> tensor<?x3x16xbf16> {
  // expected-error @+1 {{requires width heads x head_dim = 48, got 64}}
  %y = sg.split_heads %x : tensor<?x64xbf16> -> tensor<?x3x16xbf16>
  return %y : tensor<?x3x16xbf16>
}

// -----
// merge_heads_c1: [tokens, heads, D] -> [tokens, width], same tokens.
func.func @merge_heads_c1_tokens(%x: tensor<5x4x16xbf16>) -> tensor<6x64xbf16> {
  // expected-error @+1 {{token dimensions differ: 6 vs 5}}
  %y = sg.merge_heads %x : tensor<5x4x16xbf16> -> tensor<6x64xbf16>
  return %y : tensor<6x64xbf16>
}

// -----
// merge_heads_c2: the width is heads x D.
func.func @merge_heads_c2_width(%x: tensor<?x4x16xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{requires width heads x head_dim = 64, got 32}}
  %y = sg.merge_heads %x : tensor<?x4x16xbf16> -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// -----
// rope_c1: RoPE acts on [tokens, heads, D].
func.func @rope_c1_rank(%x: tensor<?x64xbf16>, %p: i64) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires a [tokens, heads, head_dim] input, got rank 2}}
  %y = sg.rope %x at %p {theta = 1.0e4 : f64} : tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// rope_c2: rotate_half pairs d with d + D/2, so D is even.
func.func @rope_c2_odd_head_dim(%x: tensor<?x4x15xbf16>, %p: i64) -> tensor<?x4x15xbf16> {
  // expected-error @+1 {{requires an even head_dim, got 15}}
  %y = sg.rope %x at %p {theta = 1.0e4 : f64} : tensor<?x4x15xbf16>
  return %y : tensor<?x4x15xbf16>
}

// -----
// rope_c3: theta is positive.
func.func @rope_c3_theta_zero(%x: tensor<?x4x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires 'theta' > 0, got 0}}
  %y = sg.rope %x at %p {theta = 0.0 : f64} : tensor<?x4x16xbf16>
  return %y : tensor<?x4x16xbf16>
}

// -----
// rope_c4: the linear factor is positive.
func.func @rope_c4_factor_negative(%x: tensor<?x4x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires 'factor' > 0, got -8}}
  %y = sg.rope %x at %p {theta = 1.0e6 : f64, factor = -8.0 : f64} : tensor<?x4x16xbf16>
  return %y : tensor<?x4x16xbf16>
}

// -----
// partial_rope_c1: [tokens, heads, D].
func.func @partial_rope_c1_rank(%x: tensor<?x64xbf16>, %p: i64) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires a [tokens, heads, head_dim] input, got rank 2}}
  %y = sg.partial_rope %x at %p {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// partial_rope_c2: an odd head width cannot be rotated in halves.
func.func @partial_rope_c2_odd_head_dim(%x: tensor<?x1x63xbf16>, %p: i64) -> tensor<?x1x63xbf16> {
  // expected-error @+1 {{requires an even head_dim, got 63}}
  %y = sg.partial_rope %x at %p {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x1x63xbf16>
  return %y : tensor<?x1x63xbf16>
}

// -----
// partial_rope_c3: the fraction is in (0, 1].
func.func @partial_rope_c3_fraction_above_one(%x: tensor<?x1x64xbf16>, %p: i64) -> tensor<?x1x64xbf16> {
  // expected-error @+1 {{requires 'rotary_fraction' in (0, 1], got 1.5}}
  %y = sg.partial_rope %x at %p {theta = 1.0e6 : f64, rotary_fraction = 1.5 : f64, basis = "head_width"} : tensor<?x1x64xbf16>
  return %y : tensor<?x1x64xbf16>
}

// -----
// partial_rope_c4: the rotated width is a whole number of pairs.
func.func @partial_rope_c4_odd_rotated_width(%x: tensor<?x1x20xbf16>, %p: i64) -> tensor<?x1x20xbf16> {
  // 0.25 x 20 = 5 channels: not whole pairs.
  // expected-error @+1 {{requires an even rotated width rotary_fraction x head_dim, got 5 (0.25 x 20)}}
  %y = sg.partial_rope %x at %p {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x1x20xbf16>
  return %y : tensor<?x1x20xbf16>
}

// -----
// partial_rope_c5: theta is positive.
func.func @partial_rope_c5_theta_negative(%x: tensor<?x1x64xbf16>, %p: i64) -> tensor<?x1x64xbf16> {
  // expected-error @+1 {{requires 'theta' > 0, got -1}}
  %y = sg.partial_rope %x at %p {theta = -1.0 : f64, rotary_fraction = 0.25 : f64, basis = "head_width"} : tensor<?x1x64xbf16>
  return %y : tensor<?x1x64xbf16>
}

// -----
// partial_rope_c6: the exponent basis is a known one.
func.func @partial_rope_c6_unknown_basis(%x: tensor<?x1x64xbf16>, %p: i64) -> tensor<?x1x64xbf16> {
  // expected-error @+1 {{requires 'basis' head_width or rotated_width, got 'rotated'}}
  %y = sg.partial_rope %x at %p {theta = 1.0e6 : f64, rotary_fraction = 0.25 : f64, basis = "rotated"} : tensor<?x1x64xbf16>
  return %y : tensor<?x1x64xbf16>
}

// -----
// sliding_attn_c1: q, k, v and caches are [tokens|slots, heads, D].
func.func @sliding_attn_c1_rank(%q: tensor<?x64xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires rank-3 q, k, v and caches, got a rank-2 operand}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x64xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c2: the window is positive.
func.func @sliding_attn_c2_window_zero(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires 'window' > 0, got 0}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 0 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c3: GQA needs query heads in whole groups per kv head.
func.func @sliding_attn_c3_heads_not_multiple(%q: tensor<?x3x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<?x3x16xbf16> {
  // expected-error @+1 {{requires query heads (3) to be a multiple of key/value heads (2)}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x3x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x3x16xbf16>
  return %a : tensor<?x3x16xbf16>
}

// -----
// sliding_attn_c4: the chunk's k and v have one row per query token.
func.func @sliding_attn_c4_token_mismatch(%q: tensor<5x4x16xbf16>, %k: tensor<3x2x16xbf16>, %v: tensor<3x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<5x4x16xbf16> {
  // expected-error @+1 {{requires k and v to have the token count of q}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<5x4x16xbf16>, tensor<3x2x16xbf16>, tensor<3x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<5x4x16xbf16>
  return %a : tensor<5x4x16xbf16>
}

// -----
// sliding_attn_c4: the caches hold the heads and widths of k and v.
func.func @sliding_attn_c4_cache_heads(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x1x16xbf16>, %vc: tensor<4x1x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires caches of [slots, heads, head_dim] matching k [?, 2, 16] and v [?, 2, 16], got [4, 1, 16] and [4, 1, 16]}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x1x16xbf16>, tensor<4x1x16xbf16>, i64) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c5: a sliding cache is a ring of exactly `window` slots.
func.func @sliding_attn_c5_slots_not_window(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<8x2x16xbf16>, %vc: tensor<8x2x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires caches of exactly 'window' = 4 slots, got 8}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<8x2x16xbf16>, tensor<8x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c6: the score scale is positive.
func.func @sliding_attn_c6_scale_zero(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires 'scale' > 0, got 0}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 0.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c7: the result is [tokens, Hq, Dv].
func.func @sliding_attn_c7_result_heads(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64) -> tensor<?x2x16xbf16> {
  // expected-error @+1 {{requires result shape [?, 4, 16], got [?, 2, 16]}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x2x16xbf16>
  return %a : tensor<?x2x16xbf16>
}

// -----
// sliding_attn_c8: image-block ids are one i32 per row.
func.func @sliding_attn_c8_blocks_rank(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64, %b: tensor<?x1xi32>) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires image-block ids of type tensor<?xi32>, got 'tensor<?x1xi32>'}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p blocks(%b) {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<?x1xi32>) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c8: the ids are i32, not i64.
func.func @sliding_attn_c8_blocks_i64(%q: tensor<?x4x16xbf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64, %b: tensor<?xi64>) -> tensor<?x4x16xbf16> {
  // expected-error @+1 {{requires image-block ids of type tensor<?xi32>, got 'tensor<?xi64>'}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p blocks(%b) {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<?xi64>) -> tensor<?x4x16xbf16>
  return %a : tensor<?x4x16xbf16>
}

// -----
// sliding_attn_c9: one block id per query token.
func.func @sliding_attn_c9_blocks_tokens(%q: tensor<6x4x16xbf16>, %k: tensor<6x2x16xbf16>, %v: tensor<6x2x16xbf16>, %kc: tensor<4x2x16xbf16>, %vc: tensor<4x2x16xbf16>, %p: i64, %b: tensor<5xi32>) -> tensor<6x4x16xbf16> {
  // expected-error @+1 {{requires one image-block id per query token (6), got 5}}
  %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %p blocks(%b) {window = 4 : i64, scale = 1.0 : f64}
      : (tensor<6x4x16xbf16>, tensor<6x2x16xbf16>, tensor<6x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64, tensor<5xi32>) -> tensor<6x4x16xbf16>
  return %a : tensor<6x4x16xbf16>
}

// -----
// full_attn_c1: rank-3 operands.
func.func @full_attn_c1_rank(%q: tensor<?x4x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires rank-3 q, k, v and caches, got a rank-2 operand}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c2: K and V caches cover the same positions.
func.func @full_attn_c2_slots_differ(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<256x1x64xbf16>, %p: i64) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires caches with the same number of slots >= 1, got 512 and 256}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<256x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c3: GQA grouping.
func.func @full_attn_c3_heads_not_multiple(%q: tensor<?x6x64xbf16>, %k: tensor<?x4x64xbf16>, %v: tensor<?x4x64xbf16>, %kc: tensor<512x4x64xbf16>, %vc: tensor<512x4x64xbf16>, %p: i64) -> tensor<?x6x64xbf16> {
  // expected-error @+1 {{requires query heads (6) to be a multiple of key/value heads (4)}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64}
      : (tensor<?x6x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<512x4x64xbf16>, tensor<512x4x64xbf16>, i64) -> tensor<?x6x64xbf16>
  return %a : tensor<?x6x64xbf16>
}

// -----
// full_attn_c4: q and k share the head width.
func.func @full_attn_c4_head_dim(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x32xbf16>, %v: tensor<?x1x32xbf16>, %kc: tensor<512x1x32xbf16>, %vc: tensor<512x1x32xbf16>, %p: i64) -> tensor<?x4x32xbf16> {
  // expected-error @+1 {{requires q and k to have the same head_dim, got 64 and 32}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x32xbf16>, tensor<?x1x32xbf16>, tensor<512x1x32xbf16>, tensor<512x1x32xbf16>, i64) -> tensor<?x4x32xbf16>
  return %a : tensor<?x4x32xbf16>
}

// -----
// full_attn_c5: V derived from K has K's shape.
func.func @full_attn_c5_v_from_k_shape(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x32xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x32xbf16>, %p: i64) -> tensor<?x4x32xbf16> {
  // expected-error @+1 {{with 'v_from_k' requires v to have the shape of k [?, 1, 64], got [?, 1, 32]}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64, v_from_k}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x32xbf16>, tensor<512x1x64xbf16>, tensor<512x1x32xbf16>, i64) -> tensor<?x4x32xbf16>
  return %a : tensor<?x4x32xbf16>
}

// -----
// full_attn_c6: the score scale is positive and finite.
func.func @full_attn_c6_scale_negative(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires 'scale' > 0, got -1}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = -1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c7: the result is [tokens, Hq, Dv].
func.func @full_attn_c7_result_width(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64) -> tensor<?x4x32xbf16> {
  // expected-error @+1 {{requires result shape [?, 4, 64], got [?, 4, 32]}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x32xbf16>
  return %a : tensor<?x4x32xbf16>
}

// -----
// full_attn_c10: keys rebuilt from V need V from K.
func.func @full_attn_c10_no_v_from_k(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<64xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{with keys_from_values requires 'v_from_k'}}
  %a = sg.full_attn %q, %v, %v cache(%vc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, key_theta = 1.0e+06 : f64, key_rotary_fraction = 2.5e-01 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c10: a V-only layer has one cache, and its keys come from V.
func.func @full_attn_c10_two_caches(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<64xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{with keys_from_values requires one cache (V) as k_cache and v_cache, and v as k}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64, key_rotary_fraction = 2.5e-01 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c10: the weight is k_norm's, [D].
func.func @full_attn_c10_weight_shape(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<32xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{with keys_from_values requires a [64] weight, got [32]}}
  %a = sg.full_attn %q, %v, %v cache(%vc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64, key_rotary_fraction = 2.5e-01 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<32xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c10: the rotation is named.
func.func @full_attn_c10_no_rotation(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<64xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{with keys_from_values requires key_theta, key_rotary_fraction and key_basis}}
  %a = sg.full_attn %q, %v, %v cache(%vc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c10: an even rotated width (partial_rope_c4).
func.func @full_attn_c10_odd_rotation(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<64xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires an even rotated width key_rotary_fraction x head_dim, got 3 (0.046875 x 64)}}
  %a = sg.full_attn %q, %v, %v cache(%vc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64, key_rotary_fraction = 4.6875e-02 : f64, key_basis = "head_width"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c10: a known basis (partial_rope_c6).
func.func @full_attn_c10_basis(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64, %w: tensor<64xbf16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires 'key_basis' head_width or rotated_width, got 'other'}}
  %a = sg.full_attn %q, %v, %v cache(%vc, %vc) at %p keys_from_values(%w) {scale = 1.0 : f64, v_from_k, key_theta = 1.0e+06 : f64, key_rotary_fraction = 2.5e-01 : f64, key_basis = "other"}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<64xbf16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// Rotation attributes belong to keys_from_values.
func.func @full_attn_key_attrs_alone(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %vc: tensor<512x1x64xbf16>, %p: i64) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{has key_theta, key_rotary_fraction or key_basis without keys_from_values}}
  %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %p {scale = 1.0 : f64, key_theta = 1.0e+06 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}
// -----
// full_attn_c8: image-block ids are a rank-1 i32 tensor.
func.func @full_attn_c8_blocks_i16(%q: tensor<?x4x64xbf16>, %k: tensor<?x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %p: i64, %b: tensor<?xi16>) -> tensor<?x4x64xbf16> {
  // expected-error @+1 {{requires image-block ids of type tensor<?xi32>, got 'tensor<?xi16>'}}
  %a = sg.full_attn %q, %k, %k cache(%kc, %kc) at %p blocks(%b) {scale = 1.0 : f64}
      : (tensor<?x4x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<?xi16>) -> tensor<?x4x64xbf16>
  return %a : tensor<?x4x64xbf16>
}

// -----
// full_attn_c9: one block id per query token.
func.func @full_attn_c9_blocks_tokens(%q: tensor<3x4x64xbf16>, %k: tensor<3x1x64xbf16>, %kc: tensor<512x1x64xbf16>, %p: i64, %b: tensor<4xi32>) -> tensor<3x4x64xbf16> {
  // expected-error @+1 {{requires one image-block id per query token (3), got 4}}
  %a = sg.full_attn %q, %k, %k cache(%kc, %kc) at %p blocks(%b) {scale = 1.0 : f64}
      : (tensor<3x4x64xbf16>, tensor<3x1x64xbf16>, tensor<3x1x64xbf16>, tensor<512x1x64xbf16>, tensor<512x1x64xbf16>, i64, tensor<4xi32>) -> tensor<3x4x64xbf16>
  return %a : tensor<3x4x64xbf16>
}

// -----
// kv_write_c1: rank-3 cache and values.
func.func @kv_write_c1_rank(%k: tensor<?x32xbf16>, %kc: tensor<4x2x16xbf16>, %p: i64) -> tensor<4x2x16xbf16> {
  // expected-error @+1 {{requires rank-3 cache and values, got ranks 3 and 2}}
  %c = sg.kv_write %k into %kc at %p {window = 4 : i64} : tensor<?x32xbf16> into tensor<4x2x16xbf16>
  return %c : tensor<4x2x16xbf16>
}

// -----
// kv_write_c2: values have the cache's heads and head width.
func.func @kv_write_c2_heads(%k: tensor<?x1x16xbf16>, %kc: tensor<4x2x16xbf16>, %p: i64) -> tensor<4x2x16xbf16> {
  // expected-error @+1 {{requires values of [tokens, heads, head_dim] matching the cache [4, 2, 16], got [?, 1, 16]}}
  %c = sg.kv_write %k into %kc at %p {window = 4 : i64} : tensor<?x1x16xbf16> into tensor<4x2x16xbf16>
  return %c : tensor<4x2x16xbf16>
}

// -----
// kv_write_c3: a ring has exactly `window` slots.
func.func @kv_write_c3_ring_slots(%k: tensor<?x2x16xbf16>, %kc: tensor<8x2x16xbf16>, %p: i64) -> tensor<8x2x16xbf16> {
  // expected-error @+1 {{requires a ring cache of exactly 'window' = 4 slots, got 8}}
  %c = sg.kv_write %k into %kc at %p {window = 4 : i64} : tensor<?x2x16xbf16> into tensor<8x2x16xbf16>
  return %c : tensor<8x2x16xbf16>
}

// -----
// layer_scalar_c1: one scalar per layer.
func.func @layer_scalar_c1_two_elements(%x: tensor<?x96xbf16>, %s: tensor<2xbf16>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires a one-element scalar, got shape [2]}}
  %y = sg.layer_scalar %x, %s : tensor<?x96xbf16>, tensor<2xbf16>
  return %y : tensor<?x96xbf16>
}

// -----
// softcap_c1: the cap is positive.
func.func @softcap_c1_cap_zero(%x: tensor<?x512xbf16>) -> tensor<?x512xbf16> {
  // expected-error @+1 {{requires 'cap' > 0, got 0}}
  %y = sg.softcap %x {cap = 0.0 : f64} : tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}

// -----
// opaque_component_c1: the component is named.
func.func @opaque_component_c1_empty() {
  // expected-error @+1 {{requires a non-empty component id}}
  sg.opaque_component ""
  return
}

// -----
// norm_linear_c1: one result per weight.
func.func @norm_linear_c1_results(%x: tensor<?x96xbf16>, %w: tensor<64x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  // expected-error @+1 {{requires one result per weight and at least one weight, got 1 weights and 2 results}}
  %a, %b = sg.norm_linear %x weights(%w) : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
  return %a, %b : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// -----
// norm_linear_c2: weights are [out, in] with the input's width.
func.func @norm_linear_c2_width(%x: tensor<?x96xbf16>, %w: tensor<64x80xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires weights of shape [out, 96], got [64, 80]}}
  %a = sg.norm_linear %x weights(%w) : (tensor<?x96xbf16>, tensor<64x80xbf16>) -> tensor<?x64xbf16>
  return %a : tensor<?x64xbf16>
}

// -----
// norm_linear_c3: the fused norm's eps is positive.
func.func @norm_linear_c3_eps(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires 'eps' > 0, got 0}}
  %a = sg.norm_linear %x norm(%n) weights(%w) {eps = 0.0 : f64} : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %a : tensor<?x64xbf16>
}

// -----
// norm_linear_c4: no norm weight without a norm.
func.func @norm_linear_c4_weight_without_eps(%x: tensor<?x96xbf16>, %n: tensor<96xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{without 'eps' takes no norm weight and 'weight_offset' 0}}
  %a = sg.norm_linear %x norm(%n) weights(%w) : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %a : tensor<?x64xbf16>
}

// -----
// norm_linear_c5: a softcap caps a single projection.
func.func @norm_linear_c5_softcap_two(%x: tensor<?x96xbf16>, %w: tensor<64x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  // expected-error @+1 {{applies 'softcap' to a single projection, got 2}}
  %a, %b = sg.norm_linear %x weights(%w, %w) {softcap = 30.0 : f64} : (tensor<?x96xbf16>, tensor<64x96xbf16>, tensor<64x96xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
  return %a, %b : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// -----
// gated_mlp_c1: gate and up have one shape.
func.func @gated_mlp_c1_up_shape(%x: tensor<?x96xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<96x96xbf16>) -> tensor<?x192xbf16> {
  // expected-error @+1 {{requires gate and up weights of one type}}
  %p = sg.gated_mlp %x gate(%wg) up(%wu) : (tensor<?x96xbf16>, tensor<192x96xbf16>, tensor<96x96xbf16>) -> tensor<?x192xbf16>
  return %p : tensor<?x192xbf16>
}

// -----
// gated_mlp_c2: a norm weight covers the input width.
func.func @gated_mlp_c2_norm_weight(%x: tensor<?x96xbf16>, %n: tensor<80xbf16>, %wg: tensor<192x96xbf16>, %wu: tensor<192x96xbf16>) -> tensor<?x192xbf16> {
  // expected-error @+1 {{requires a norm weight of shape [96], got [80]}}
  %p = sg.gated_mlp %x norm(%n) gate(%wg) up(%wu) {eps = 1.0e-6 : f64} : (tensor<?x96xbf16>, tensor<80xbf16>, tensor<192x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
  return %p : tensor<?x192xbf16>
}

// -----
// linear_c4: the bias has one value per output row.
func.func @linear_c4_bias_shape(%x: tensor<16x96xbf16>, %w: tensor<64x96xbf16>, %b: tensor<96xbf16>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{requires a bias of shape [64], got [96]}}
  %y = sg.linear %x, %w bias(%b) : (tensor<16x96xbf16>, tensor<64x96xbf16>, tensor<96xbf16>) -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

// -----
// linear_c2: a weight of rank > 2 flattens its trailing dimensions into 'in'.
func.func @linear_c2_conv_in(%x: tensor<16x48xbf16>, %w: tensor<32x3x4x5xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{input width 48 does not match weight 'in' dimension 60}}
  %y = sg.linear %x, %w : (tensor<16x48xbf16>, tensor<32x3x4x5xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----
// linear_c5: the weight layout is one of two.
func.func @linear_c5_layout(%x: tensor<16x96xbf16>, %w: tensor<96x64xbf16>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{requires 'weight_layout' out_in or in_out, got 'transposed'}}
  %y = sg.linear %x, %w {weight_layout = "transposed"} : (tensor<16x96xbf16>, tensor<96x64xbf16>) -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

// -----
// linear_c5: an [in, out] weight is a matrix.
func.func @linear_c5_in_out_rank(%x: tensor<16x48xbf16>, %w: tensor<32x3x4x4xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{with 'weight_layout' in_out requires a rank-2 weight, got rank 4}}
  %y = sg.linear %x, %w {weight_layout = "in_out"} : (tensor<16x48xbf16>, tensor<32x3x4x4xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----
// layer_norm_c1: eps is positive.
func.func @layer_norm_c1_eps_zero(%x: tensor<16x32xbf16>, %w: tensor<32xbf16>, %b: tensor<32xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{requires 'eps' > 0, got 0}}
  %n = sg.layer_norm %x, %w, %b {eps = 0.0 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<16x32xbf16>
  return %n : tensor<16x32xbf16>
}

// -----
// layer_norm_c2: weight and bias are [D].
func.func @layer_norm_c2_bias_width(%x: tensor<16x32xbf16>, %w: tensor<32xbf16>, %b: tensor<16xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{requires a weight and a bias of shape [32], got [32] and [16]}}
  %n = sg.layer_norm %x, %w, %b {eps = 1.0e-6 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<16xbf16>) -> tensor<16x32xbf16>
  return %n : tensor<16x32xbf16>
}

// -----
// layer_norm_c3: the result has the input's shape.
func.func @layer_norm_c3_result(%x: tensor<16x32xbf16>, %w: tensor<32xbf16>, %b: tensor<32xbf16>) -> tensor<8x32xbf16> {
  // expected-error @+1 {{requires the result shape to equal the input shape [16, 32]}}
  %n = sg.layer_norm %x, %w, %b {eps = 1.0e-6 : f64} : (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
  return %n : tensor<8x32xbf16>
}

// -----
// affine_c1: scale and shift are finite.
func.func @affine_c1_nan(%x: tensor<4x12xf32>) -> tensor<4x12xbf16> {
  // expected-error @+1 {{requires finite 'scale' and 'shift', got 2 and nan}}
  %y = sg.affine %x {scale = 2.0 : f64, shift = 0x7FF8000000000000 : f64} : (tensor<4x12xf32>) -> tensor<4x12xbf16>
  return %y : tensor<4x12xbf16>
}

// -----
// affine_c2: elementwise, same shape.
func.func @affine_c2_shape(%x: tensor<4x12xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{requires the result shape to equal the input shape [4, 12]}}
  %y = sg.affine %x {scale = 2.0 : f64, shift = -1.0 : f64} : (tensor<4x12xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----
// encoder_attn_c1: q, k and v are [tokens, heads, D].
func.func @encoder_attn_c1_rank(%q: tensor<16x32xbf16>, %k: tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16> {
  // expected-error @+1 {{requires rank-3 q, k and v, got a rank-2 operand}}
  %a = sg.encoder_attn %q, %k, %k {scale = 1.0 : f64} : (tensor<16x32xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16>
  return %a : tensor<16x4x8xbf16>
}

// -----
// encoder_attn_c2: k and v have the same tokens.
func.func @encoder_attn_c2_tokens(%q: tensor<16x4x8xbf16>, %k: tensor<16x4x8xbf16>, %v: tensor<12x4x8xbf16>) -> tensor<16x4x8xbf16> {
  // expected-error @+1 {{requires k and v with the same tokens and heads, got [16, 4, 8] and [12, 4, 8]}}
  %a = sg.encoder_attn %q, %k, %v {scale = 1.0 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<12x4x8xbf16>) -> tensor<16x4x8xbf16>
  return %a : tensor<16x4x8xbf16>
}

// -----
// encoder_attn_c3: one position pair per key.
func.func @encoder_attn_c3_mask(%q: tensor<16x4x8xbf16>, %k: tensor<16x4x8xbf16>, %p: tensor<12x2xi32>) -> tensor<16x4x8xbf16> {
  // expected-error @+1 {{requires key positions of shape [16, 2], got [12, 2]}}
  %a = sg.encoder_attn %q, %k, %k mask(%p) {scale = 1.0 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<12x2xi32>) -> tensor<16x4x8xbf16>
  return %a : tensor<16x4x8xbf16>
}

// -----
// encoder_attn_c4: the scale is positive.
func.func @encoder_attn_c4_scale(%q: tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16> {
  // expected-error @+1 {{requires 'scale' > 0, got -1}}
  %a = sg.encoder_attn %q, %q, %q {scale = -1.0 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16>
  return %a : tensor<16x4x8xbf16>
}

// -----
// encoder_attn_c5: the result is [tokens of q, Hq, Dv].
func.func @encoder_attn_c5_result(%q: tensor<16x4x8xbf16>) -> tensor<16x2x8xbf16> {
  // expected-error @+1 {{requires result shape [16, 4, 8], got [16, 2, 8]}}
  %a = sg.encoder_attn %q, %q, %q {scale = 1.0 : f64} : (tensor<16x4x8xbf16>, tensor<16x4x8xbf16>, tensor<16x4x8xbf16>) -> tensor<16x2x8xbf16>
  return %a : tensor<16x2x8xbf16>
}

// -----
// axial_rope_c1: the head splits into four quarters.
func.func @axial_rope_c1_head_dim(%x: tensor<16x2x6xbf16>, %p: tensor<16x2xi32>) -> tensor<16x2x6xbf16> {
  // expected-error @+1 {{requires a head_dim divisible by 4, got 6}}
  %r = sg.axial_rope %x at %p {theta = 100.0 : f64} : tensor<16x2x6xbf16>, tensor<16x2xi32>
  return %r : tensor<16x2x6xbf16>
}

// -----
// axial_rope_c2: one (x, y) per token.
func.func @axial_rope_c2_positions(%x: tensor<16x2x8xbf16>, %p: tensor<16x3xi32>) -> tensor<16x2x8xbf16> {
  // expected-error @+1 {{requires positions of shape [16, 2], got [16, 3]}}
  %r = sg.axial_rope %x at %p {theta = 100.0 : f64} : tensor<16x2x8xbf16>, tensor<16x3xi32>
  return %r : tensor<16x2x8xbf16>
}

// -----
// axial_rope_c3: theta is positive.
func.func @axial_rope_c3_theta(%x: tensor<16x2x8xbf16>, %p: tensor<16x2xi32>) -> tensor<16x2x8xbf16> {
  // expected-error @+1 {{requires 'theta' > 0, got 0}}
  %r = sg.axial_rope %x at %p {theta = 0.0 : f64} : tensor<16x2x8xbf16>, tensor<16x2xi32>
  return %r : tensor<16x2x8xbf16>
}

// -----
// add_position_embedding_c1: the input is [N, D].
func.func @add_position_embedding_c1_rank(%x: tensor<16x2x8xbf16>, %t: tensor<16x2x8xbf16>) -> tensor<16x2x8xbf16> {
  // expected-error @+1 {{requires an [N, D] input, got rank 3}}
  %h = sg.add_position_embedding %x, %t : (tensor<16x2x8xbf16>, tensor<16x2x8xbf16>) -> tensor<16x2x8xbf16>
  return %h : tensor<16x2x8xbf16>
}

// -----
// add_position_embedding_c2: one table row per patch.
func.func @add_position_embedding_c2_table(%x: tensor<16x32xbf16>, %t: tensor<9x32xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{without positions requires a table of the input's shape [16, 32], got [9, 32]}}
  %h = sg.add_position_embedding %x, %t : (tensor<16x32xbf16>, tensor<9x32xbf16>) -> tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}

// -----
// add_position_embedding_c3: with positions, a [2, P, D] table.
func.func @add_position_embedding_c3_table(%x: tensor<16x32xbf16>, %t: tensor<3x64x32xbf16>, %p: tensor<16x2xi32>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{with positions requires a table of shape [2, P, 32], got [3, 64, 32]}}
  %h = sg.add_position_embedding %x, %t at %p : (tensor<16x32xbf16>, tensor<3x64x32xbf16>, tensor<16x2xi32>) -> tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}

// -----
// avg_pool_2d_c1: the tokens form a square grid.
func.func @avg_pool_2d_c1_square(%x: tensor<12x32xbf16>) -> tensor<3x32xbf16> {
  // expected-error @+1 {{requires a square number of tokens, got 12}}
  %p = sg.avg_pool_2d %x {kernel = 2 : i64} : tensor<12x32xbf16> -> tensor<3x32xbf16>
  return %p : tensor<3x32xbf16>
}

// -----
// avg_pool_2d_c2: the kernel divides the grid side.
func.func @avg_pool_2d_c2_kernel(%x: tensor<16x32xbf16>) -> tensor<1x32xbf16> {
  // expected-error @+1 {{requires a 'kernel' > 0 dividing the grid side 4, got 3}}
  %p = sg.avg_pool_2d %x {kernel = 3 : i64} : tensor<16x32xbf16> -> tensor<1x32xbf16>
  return %p : tensor<1x32xbf16>
}

// -----
// avg_pool_2d_c3: (G/k)^2 tokens.
func.func @avg_pool_2d_c3_result(%x: tensor<16x32xbf16>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{requires result shape [4, 32], got [2, 32]}}
  %p = sg.avg_pool_2d %x {kernel = 2 : i64} : tensor<16x32xbf16> -> tensor<2x32xbf16>
  return %p : tensor<2x32xbf16>
}

// -----
// position_pool_c1: the kernel is positive.
func.func @position_pool_c1_kernel(%x: tensor<18x32xbf16>, %p: tensor<18x2xi32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{requires 'kernel' > 0, got 0}}
  %y = sg.position_pool %x at %p {kernel = 0 : i64} : (tensor<18x32xbf16>, tensor<18x2xi32>) -> tensor<2x32xbf16>
  return %y : tensor<2x32xbf16>
}

// -----
// position_pool_c2: one position pair per patch.
func.func @position_pool_c2_positions(%x: tensor<18x32xbf16>, %p: tensor<9x2xi32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{requires an [N, D] input and [N, 2] positions, got [18, 32] and [9, 2]}}
  %y = sg.position_pool %x at %p {kernel = 3 : i64} : (tensor<18x32xbf16>, tensor<9x2xi32>) -> tensor<2x32xbf16>
  return %y : tensor<2x32xbf16>
}

// -----
// position_pool_c3: [T, D], T >= 1, D the input's.
func.func @position_pool_c3_result(%x: tensor<18x32xbf16>, %p: tensor<18x2xi32>) -> tensor<2x16xbf16> {
  // expected-error @+1 {{requires a result of shape [T, 32] with T >= 1, got [2, 16]}}
  %y = sg.position_pool %x at %p {kernel = 3 : i64} : (tensor<18x32xbf16>, tensor<18x2xi32>) -> tensor<2x16xbf16>
  return %y : tensor<2x16xbf16>
}

// -----
// standardize_c1: the pre-scale is finite.
func.func @standardize_c1_pre_scale(%x: tensor<2x32xbf16>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{requires a finite 'pre_scale', got inf}}
  %s = sg.standardize %x {pre_scale = 0x7FF0000000000000 : f64} : (tensor<2x32xbf16>) -> tensor<2x32xbf16>
  return %s : tensor<2x32xbf16>
}

// -----
// standardize_c2: bias and scale come together.
func.func @standardize_c2_bias_alone(%x: tensor<2x32xbf16>, %b: tensor<32xbf16>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{requires 'bias' and 'scale' together}}
  %s = sg.standardize %x bias(%b) {pre_scale = 5.656854249492381 : f64} : (tensor<2x32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  return %s : tensor<2x32xbf16>
}

// -----
// standardize_c3: elementwise, same shape.
func.func @standardize_c3_result(%x: tensor<2x32xbf16>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{requires the result shape to equal the input shape [2, 32]}}
  %s = sg.standardize %x {pre_scale = 5.656854249492381 : f64} : (tensor<2x32xbf16>) -> tensor<4x32xbf16>
  return %s : tensor<4x32xbf16>
}

// -----
// merge_image_rows_c1: rows of hidden vectors.
func.func @merge_image_rows_c1(%x: tensor<?x2x16xbf16>, %e: tensor<?x2x16xf32>, %b: tensor<?xi32>) -> tensor<?x2x16xbf16> {
  // expected-error @+1 {{requires x of rank 2 [tokens, H], got [?, 2, 16]}}
  %m = sg.merge_image_rows %x, %e rows(%b) : (tensor<?x2x16xbf16>, tensor<?x2x16xf32>, tensor<?xi32>) -> tensor<?x2x16xbf16>
  return %m : tensor<?x2x16xbf16>
}

// -----
// merge_image_rows_c2: one soft token per row, of the hidden width.
func.func @merge_image_rows_c2(%x: tensor<?x32xbf16>, %e: tensor<?x16xf32>, %b: tensor<?xi32>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{requires embeds of the shape of x [?, 32], got [?, 16]}}
  %m = sg.merge_image_rows %x, %e rows(%b) : (tensor<?x32xbf16>, tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x32xbf16>
  return %m : tensor<?x32xbf16>
}

// -----
// merge_image_rows_c3: one i32 block id per row.
func.func @merge_image_rows_c3(%x: tensor<4x32xbf16>, %e: tensor<4x32xf32>, %b: tensor<3xi32>) -> tensor<4x32xbf16> {
  // expected-error @+1 {{requires blocks of i32 [tokens] with the tokens of x, got 'tensor<3xi32>'}}
  %m = sg.merge_image_rows %x, %e rows(%b) : (tensor<4x32xbf16>, tensor<4x32xf32>, tensor<3xi32>) -> tensor<4x32xbf16>
  return %m : tensor<4x32xbf16>
}

// -----
// norm_rope_c1: [tokens, heads, head_dim] in, its type out.
func.func @norm_rope_c1(%x: tensor<4x16xbf16>, %w: tensor<16xbf16>, %pos: i64) -> tensor<4x16xbf16> {
  // expected-error @+1 {{requires a [tokens, heads, head_dim] input and a result of its type}}
  %y = sg.norm_rope %x norm(%w) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<4x16xbf16>, tensor<16xbf16>, i64) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----
// norm_rope_c2: the fused norm's weight is [head_dim].
func.func @norm_rope_c2(%x: tensor<4x2x16xbf16>, %w: tensor<8xbf16>, %pos: i64) -> tensor<4x2x16xbf16> {
  // expected-error @+1 {{requires a norm weight of shape [16], got [8]}}
  %y = sg.norm_rope %x norm(%w) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<4x2x16xbf16>, tensor<8xbf16>, i64) -> tensor<4x2x16xbf16>
  return %y : tensor<4x2x16xbf16>
}

// -----
// norm_rope_c3: RoPE rotates pairs: an even head_dim.
func.func @norm_rope_c3(%x: tensor<4x2x15xbf16>, %w: tensor<15xbf16>, %pos: i64) -> tensor<4x2x15xbf16> {
  // expected-error @+1 {{requires an even head_dim, got 15}}
  %y = sg.norm_rope %x norm(%w) at %pos {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64}
      : (tensor<4x2x15xbf16>, tensor<15xbf16>, i64) -> tensor<4x2x15xbf16>
  return %y : tensor<4x2x15xbf16>
}

// -----
// norm_rope_c4: a ring cache has exactly `window` slots.
func.func @norm_rope_c4(%x: tensor<4x2x16xbf16>, %w: tensor<16xbf16>, %pos: i64, %c: tensor<8x2x16xbf16>) -> tensor<8x2x16xbf16> {
  // expected-error @+1 {{requires a ring cache of exactly 'window' = 4 slots, got 8}}
  %y, %c2 = sg.norm_rope %x norm(%w) at %pos into %c {eps = 1.0e-6 : f64, theta = 1.0e4 : f64, weight_offset = 1 : i64, window = 4 : i64}
      : (tensor<4x2x16xbf16>, tensor<16xbf16>, i64, tensor<8x2x16xbf16>) -> (tensor<4x2x16xbf16>, tensor<8x2x16xbf16>)
  return %c2 : tensor<8x2x16xbf16>
}

// -----
// quant_c1: a block encoding the compiler knows (SGTypes.td).
// expected-error @+1 {{quant_c1: unknown block encoding 'Q5_K' (Q8_0, Q4_0, Q6_K, Q4_K, FP8_CH, INT4_G32 and INT4_G128 are known)}}
func.func @quant_c1_unknown(%w: tensor<64x256x!sg.quant<"Q5_K">>) {
  return
}

// -----
// weight_c3: a block-encoded weight's rows are whole blocks.
func.func @weight_c3_partial_block() -> tensor<64x80x!sg.quant<"Q4_0">> {
  // expected-error @+1 {{requires the rows of a Q4_0 weight to be whole blocks of 32, got K = 80}}
  %w = sg.weight "w" : tensor<64x80x!sg.quant<"Q4_0">>
  return %w : tensor<64x80x!sg.quant<"Q4_0">>
}

// -----
// weight_c3: a block-encoded weight is a matrix.
func.func @weight_c3_rank() -> tensor<2x64x256x!sg.quant<"Q6_K">> {
  // expected-error @+1 {{requires a block-encoded weight to be a static [rows, K] matrix, got [2, 64, 256]}}
  %w = sg.weight "w" : tensor<2x64x256x!sg.quant<"Q6_K">>
  return %w : tensor<2x64x256x!sg.quant<"Q6_K">>
}

// -----
// weight_c3: Q4_K's blocks are 256 wide.
func.func @weight_c3_partial_q4_k() -> tensor<64x384x!sg.quant<"Q4_K">> {
  // expected-error @+1 {{requires the rows of a Q4_K weight to be whole blocks of 256, got K = 384}}
  %w = sg.weight "w" : tensor<64x384x!sg.quant<"Q4_K">>
  return %w : tensor<64x384x!sg.quant<"Q4_K">>
}

// -----
// embed_c4: a block-encoded table's rows are whole blocks.
func.func @embed_c4_partial_block(%t: tensor<512x96x!sg.quant<"Q6_K">>, %ids: tensor<?xi32>) -> tensor<?x96xbf16> {
  // expected-error @+1 {{requires the rows of a Q6_K weight to be whole blocks of 256, got K = 96}}
  %h = sg.embed %t[%ids] scale(1.0) : (tensor<512x96x!sg.quant<"Q6_K">>, tensor<?xi32>) -> tensor<?x96xbf16>
  return %h : tensor<?x96xbf16>
}

// -----
// linear_c6: a block-encoded weight is read [out, in].
func.func @linear_c6_in_out(%x: tensor<16x64xbf16>, %w: tensor<64x64x!sg.quant<"Q8_0">>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{requires a block-encoded weight in the out_in layout}}
  %y = sg.linear %x, %w {weight_layout = "in_out"} : (tensor<16x64xbf16>, tensor<64x64x!sg.quant<"Q8_0">>) -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

// -----
// linear_c6: whole blocks in the fused projections too.
func.func @linear_c6_fused_partial_block(%x: tensor<?x48xbf16>, %w: tensor<64x48x!sg.quant<"Q8_0">>) -> tensor<?x64xbf16> {
  // expected-error @+1 {{requires the rows of a Q8_0 weight to be whole blocks of 32, got K = 48}}
  %y = sg.norm_linear %x weights(%w) : (tensor<?x48xbf16>, tensor<64x48x!sg.quant<"Q8_0">>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----
// take_row_c1: the row is inside the static leading dimension.
func.func @take_row_c1_row(%x: tensor<4x64xbf16>) -> tensor<1x64xbf16> {
  // expected-error @+1 {{row 4 is outside [0, 4)}}
  %r = sg.take_row %x[4] : tensor<4x64xbf16> -> tensor<1x64xbf16>
  return %r : tensor<1x64xbf16>
}

// -----
// take_row_c1: the leading dimension is static.
func.func @take_row_c1_dynamic(%x: tensor<?x64xbf16>) -> tensor<1x64xbf16> {
  // expected-error @+1 {{requires an input with a static leading dimension, got 'tensor<?x64xbf16>'}}
  %r = sg.take_row %x[0] : tensor<?x64xbf16> -> tensor<1x64xbf16>
  return %r : tensor<1x64xbf16>
}

// -----
// stack_rows_c1: the result holds one row per operand.
func.func @stack_rows_c1_count(%a: tensor<1x64xbf16>, %b: tensor<1x64xbf16>) -> tensor<3x64xbf16> {
  // expected-error @+1 {{requires result type 'tensor<2x64xbf16>', got 'tensor<3x64xbf16>'}}
  %s = sg.stack_rows %a, %b : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<3x64xbf16>
  return %s : tensor<3x64xbf16>
}

// -----
// stack_rows_c1: rows of one type, leading dimension 1.
func.func @stack_rows_c1_rows(%a: tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  // expected-error @+1 {{requires rows of leading dimension 1, got 'tensor<2x64xbf16>'}}
  %s = sg.stack_rows %a : tensor<2x64xbf16> -> tensor<2x64xbf16>
  return %s : tensor<2x64xbf16>
}
