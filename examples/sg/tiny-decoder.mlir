// A hand-written one-layer Gemma-4-style decoder in the sg dialect: the
// bundled default for `sgc compile` until a graph is given. Sliding layer,
// window 4, 4 query / 2 kv heads of width 16, hidden 96, vocab 512.
// The embedding table is referenced twice (lookup and tied LM head); the
// graph-opt phase folds the two references into one. Ops carry the block tags
// the importer puts on them (sg.block, sg.layer), which sg-outline-layers uses.
module {
  func.func @forward(%tokens: tensor<?xi32>, %pos0: i64,
                     %k_cache0: tensor<4x2x16xbf16>, %v_cache0: tensor<4x2x16xbf16>)
      -> (tensor<?x512xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>) {
    %embed = sg.weight "model.language_model.embed_tokens.weight" : tensor<512x96xbf16>
    %h0 = sg.embed %embed[%tokens] scale(9.8125) {sg.block = "embed"} : (tensor<512x96xbf16>, tensor<?xi32>) -> tensor<?x96xbf16>

    // Attention block.
    %w_in = sg.weight "model.language_model.layers.0.input_layernorm.weight" : tensor<96xbf16>
    %x = sg.rms_norm %h0, %w_in {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    %wq = sg.weight "model.language_model.layers.0.self_attn.q_proj.weight" : tensor<64x96xbf16>
    %wk = sg.weight "model.language_model.layers.0.self_attn.k_proj.weight" : tensor<32x96xbf16>
    %wv = sg.weight "model.language_model.layers.0.self_attn.v_proj.weight" : tensor<32x96xbf16>
    %q = sg.linear %x, %wq {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
    %k = sg.linear %x, %wk {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x96xbf16>, tensor<32x96xbf16>) -> tensor<?x32xbf16>
    %v = sg.linear %x, %wv {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x96xbf16>, tensor<32x96xbf16>) -> tensor<?x32xbf16>
    %qh = sg.split_heads %q {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x64xbf16> -> tensor<?x4x16xbf16>
    %kh = sg.split_heads %k {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
    %vh = sg.split_heads %v {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x32xbf16> -> tensor<?x2x16xbf16>
    %wqn = sg.weight "model.language_model.layers.0.self_attn.q_norm.weight" : tensor<16xbf16>
    %wkn = sg.weight "model.language_model.layers.0.self_attn.k_norm.weight" : tensor<16xbf16>
    %qn = sg.rms_norm %qh, %wqn {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x4x16xbf16>, tensor<16xbf16>) -> tensor<?x4x16xbf16>
    %kn = sg.rms_norm %kh, %wkn {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x2x16xbf16>, tensor<16xbf16>) -> tensor<?x2x16xbf16>
    %vn = sg.rms_norm %vh {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x2x16xbf16>) -> tensor<?x2x16xbf16>
    %qr = sg.rope %qn at %pos0 {sg.block = "layer", sg.layer = 0 : i64, theta = 1.0e4 : f64} : tensor<?x4x16xbf16>
    %kr = sg.rope %kn at %pos0 {sg.block = "layer", sg.layer = 0 : i64, theta = 1.0e4 : f64} : tensor<?x2x16xbf16>
    %att = sg.sliding_attn %qr, %kr, %vn cache(%k_cache0, %v_cache0) at %pos0 {sg.block = "layer", sg.layer = 0 : i64, window = 4 : i64, scale = 1.0 : f64}
        : (tensor<?x4x16xbf16>, tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, i64) -> tensor<?x4x16xbf16>
    %k_cache1 = sg.kv_write %kr into %k_cache0 at %pos0 {sg.block = "layer", sg.layer = 0 : i64, window = 4 : i64} : tensor<?x2x16xbf16> into tensor<4x2x16xbf16>
    %v_cache1 = sg.kv_write %vn into %v_cache0 at %pos0 {sg.block = "layer", sg.layer = 0 : i64, window = 4 : i64} : tensor<?x2x16xbf16> into tensor<4x2x16xbf16>
    %attf = sg.merge_heads %att {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x4x16xbf16> -> tensor<?x64xbf16>
    %wo = sg.weight "model.language_model.layers.0.self_attn.o_proj.weight" : tensor<96x64xbf16>
    %o = sg.linear %attf, %wo {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16>
    %w_pa = sg.weight "model.language_model.layers.0.post_attention_layernorm.weight" : tensor<96xbf16>
    %on = sg.rms_norm %o, %w_pa {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    %h1 = sg.add %h0, %on {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x96xbf16>

    // Gated MLP block.
    %w_pf = sg.weight "model.language_model.layers.0.pre_feedforward_layernorm.weight" : tensor<96xbf16>
    %u = sg.rms_norm %h1, %w_pf {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    %wg = sg.weight "model.language_model.layers.0.mlp.gate_proj.weight" : tensor<192x96xbf16>
    %wu = sg.weight "model.language_model.layers.0.mlp.up_proj.weight" : tensor<192x96xbf16>
    %wd = sg.weight "model.language_model.layers.0.mlp.down_proj.weight" : tensor<96x192xbf16>
    %g = sg.linear %u, %wg {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
    %up = sg.linear %u, %wu {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x96xbf16>, tensor<192x96xbf16>) -> tensor<?x192xbf16>
    %ga = sg.gelu_tanh %g {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x192xbf16>
    %gu = sg.mul %ga, %up {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x192xbf16>
    %m = sg.linear %gu, %wd {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x192xbf16>, tensor<96x192xbf16>) -> tensor<?x96xbf16>
    %w_pff = sg.weight "model.language_model.layers.0.post_feedforward_layernorm.weight" : tensor<96xbf16>
    %mn = sg.rms_norm %m, %w_pff {sg.block = "layer", sg.layer = 0 : i64, eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    %h2 = sg.add %h1, %mn {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x96xbf16>
    %s = sg.weight "model.language_model.layers.0.layer_scalar" : tensor<1xbf16>
    %h3 = sg.layer_scalar %h2, %s {sg.block = "layer", sg.layer = 0 : i64} : tensor<?x96xbf16>, tensor<1xbf16>

    // Final norm, tied LM head, softcap.
    %w_fn = sg.weight "model.language_model.norm.weight" : tensor<96xbf16>
    %hf = sg.rms_norm %h3, %w_fn {sg.block = "head", eps = 9.999999974752427e-07 : f64, weight_offset = 0 : i64} : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    %head = sg.weight "model.language_model.embed_tokens.weight" : tensor<512x96xbf16>
    %logits = sg.linear %hf, %head {sg.block = "head"} : (tensor<?x96xbf16>, tensor<512x96xbf16>) -> tensor<?x512xbf16>
    %capped = sg.softcap %logits {sg.block = "head", cap = 30.0 : f64} : tensor<?x512xbf16>
    return %capped, %k_cache1, %v_cache1 : tensor<?x512xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>
  }
}
