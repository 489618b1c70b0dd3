//===- SGVisionOps.td - the vision towers' ops -------------*- tablegen -*-===//
//
// Part of sgc. Included by SGOps.td at this point of its op list.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGVISIONOPS_TD
#define SGC_DIALECTS_SG_IR_SGVISIONOPS_TD

//===----------------------------------------------------------------------===//
// Vision towers (gemma-vision.md G3.2-G3.4, G4.2-G4.5)
//===----------------------------------------------------------------------===//

def SG_LayerNormOp : SG_Op<"layer_norm", [SG_RowWise, Pure]> {
  let summary = "LayerNorm over the last dimension, weight and bias";
  let description = [{
    Over the last dimension `d` of `x`, in f32: `μ = mean_d(x)`,
    `σ² = mean_d((x − μ)²)` (biased), then
    `result = round((x − μ) · (σ² + eps)^(−1/2) · f32(w) + f32(b))`, one
    rounding to the result type (SigLIP's `nn.LayerNorm`, which computes
    bf16 inputs in f32).

    Constraints:
    - C1: `eps` is finite and > 0.
    - C2: `weight` and `bias` have rank 1 and the size of the last dimension
      of `x`.
    - C3: the result has the shape of `x`.

    ```mlir
    %n = sg.layer_norm %x, %w, %b {eps = 1.0e-06 : f64}
        : (tensor<4096x1152xbf16>, tensor<1152xbf16>, tensor<1152xbf16>)
        -> tensor<4096x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_FloatTensor:$weight,
                       SG_FloatTensor:$bias, F64Attr:$eps);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_AffineOp : SG_Op<"affine", [SG_RowWise, Pure]> {
  let summary = "x · scale + shift, in f32, one rounding";
  let description = [{
    `result = round(f32(x) · f32(scale) + f32(shift))`: a multiply, then an
    add (not fused), then one rounding to the result type, which may differ
    from `x`'s. Gemma 4's pixel rescale `2·(pv − 0.5)` is scale 2, shift −1:
    `·2` is exact in f32, so the two forms agree bit for bit.

    Constraints:
    - C1: `scale` and `shift` are finite.
    - C2: the result has the shape of `x`.

    ```mlir
    %p = sg.affine %pv {scale = 2.0 : f64, shift = -1.0 : f64}
        : (tensor<2520x768xf32>) -> tensor<2520x768xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, F64Attr:$scale, F64Attr:$shift);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def SG_EncoderAttnOp : SG_Op<"encoder_attn", [Pure]> {
  let summary = "bidirectional attention over all tokens, no cache";
  let description = [{
    Every query `i` attends over every key `j` of `k` and `v` (no causal
    mask, no cache). Per query head `h`, with kv head
    `g = ⌊h / (Hq/Hkv)⌋` (GQA): `s_j = round(round(q_i·k_j) × scale)`,
    `P = round(softmax_f32(s))`, `result = round(Σ_j P_j · v_j)` with the
    sum in f32, as `sg.full_attn` computes them. With `key_positions`
    (`[keys, 2]`, Gemma 4's patch positions), key `j` is masked when
    `key_positions[j][0] < 0` (a padding patch): its probability is exactly
    0, as the reference's additive mask makes it. A query whose every key is
    masked gets 0.

    Constraints:
    - C1: `q`, `k` and `v` have rank 3 `[tokens, heads, D]`.
    - C2: the query heads are a multiple of the key/value heads; `k` and `v`
      have the same tokens and heads; `q` and `k` the same head width.
    - C3: `key_positions`, when present, is `[keys, 2]` with `keys` the
      tokens of `k`.
    - C4: `scale` is finite and > 0.
    - C5: the result is `[tokens of q, Hq, Dv]`.

    ```mlir
    %a = sg.encoder_attn %q, %k, %v mask(%pos) {scale = 1.0 : f64}
        : (tensor<2520x16x72xbf16>, tensor<2520x16x72xbf16>,
           tensor<2520x16x72xbf16>, tensor<2520x2xi32>)
        -> tensor<2520x16x72xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$q, SG_FloatTensor:$k,
                       SG_FloatTensor:$v, Optional<SG_IntTensor>:$key_positions,
                       F64Attr:$scale);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` `(` $key_positions^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_AxialRopeOp : SG_Op<"axial_rope",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "2-D RoPE: half the head by column, half by row";
  let description = [{
    Gemma 4's vision RoPE. With `D` the head width, `Q = D/4` and
    `inv_freq[i] = 1 / theta^(f32(2i) / (D/2))` for `i < Q` (f32): token
    `n` at column `px = positions[n][0]` and row `py = positions[n][1]`
    rotates channels `[0, D/2)` by `px` and `[D/2, D)` by `py`, each half
    in rotate_half style: with `o` the half's first channel, `a = pos ·
    inv_freq[j]` (f32), `c = round(cos a)`, `s = round(sin a)`,
    `y[o+j] = x[o+j]·c − x[o+j+Q]·s` and `y[o+j+Q] = x[o+j+Q]·c + x[o+j]·s`,
    each product and the sum rounded to the element type, as `sg.rope`.
    Positions are signed: a padding patch (−1, −1) is rotated by −1 on both
    axes (its rows are masked and zeroed later, so any finite value works).

    Constraints:
    - C1: `x` has rank 3 `[tokens, heads, D]` with `D` divisible by 4.
    - C2: `positions` is `[tokens, 2]`.
    - C3: `theta` is finite and > 0.

    ```mlir
    %r = sg.axial_rope %q at %pos {theta = 1.0e+02 : f64}
        : tensor<2520x16x72xbf16>, tensor<2520x2xi32>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_IntTensor:$positions,
                       F64Attr:$theta);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `at` $positions attr-dict `:` type($x) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def SG_AddPositionEmbeddingOp : SG_Op<"add_position_embedding",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "add a learned position embedding to the patch embeddings";
  let description = [{
    Without `positions` (Gemma 3): `result[n] = round(x[n] + T[n])` with
    `table` `[N, D]`. With `positions` `[N, 2]` (Gemma 4, `table`
    `[2, P, D]`): `pos[n] = round(T[0][px] + T[1][py])` with
    `(px, py) = positions[n]`, and `pos[n] = 0` when `px < 0` (a padding
    patch) or either index is outside `[0, P)`; then
    `result[n] = round(x[n] + pos[n])`. Sums in f32, rounded to the result
    type.

    Constraints:
    - C1: `x` has rank 2 `[N, D]`.
    - C2: without `positions`, `table` is `[N, D]`.
    - C3: with `positions`, `table` is `[2, P, D]` and `positions` `[N, 2]`.

    ```mlir
    %h = sg.add_position_embedding %e, %t
        : (tensor<4096x1152xbf16>, tensor<4096x1152xbf16>) -> tensor<4096x1152xbf16>
    %g = sg.add_position_embedding %e, %t2 at %pos
        : (tensor<2520x1152xbf16>, tensor<2x10240x1152xbf16>, tensor<2520x2xi32>)
        -> tensor<2520x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_FloatTensor:$table,
                       Optional<SG_IntTensor>:$positions);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $table (`at` $positions^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_AvgPool2DOp : SG_Op<"avg_pool_2d", [Pure]> {
  let summary = "k×k mean pooling of a row-major G×G token grid";
  let description = [{
    `x` is `[G·G, D]`, token `r·G + c` at row `r`, column `c`. With
    `M = G/k`, `result[pr·M + pc, d] = round(Σ_{ky<k} Σ_{kx<k}
    x[(k·pr+ky)·G + k·pc+kx, d] / k²)`: the f32 sum in order (ky, kx), one
    division, one rounding (Gemma 3's `AvgPool2d(4, 4)` of 64×64 patches to
    256 tokens).

    Constraints:
    - C1: `x` has rank 2 and a square number `G·G` of tokens.
    - C2: `kernel` > 0 divides `G`.
    - C3: the result is `[(G/k)², D]`.

    ```mlir
    %p = sg.avg_pool_2d %h {kernel = 4 : i64}
        : tensor<4096x1152xbf16> -> tensor<256x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, I64Attr:$kernel);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def SG_PositionPoolOp : SG_Op<"position_pool", [Pure]> {
  let summary = "k×k mean pooling by patch position (Gemma 4)";
  let description = [{
    Gemma 4's pooler (gemma-vision.md §G4.4 steps 1-3). A patch `n` with
    `px = positions[n][0] < 0` is padding and contributes nothing. With
    `Wp = max valid px + 1` and `Hp = max valid py + 1`, patch `n` falls in
    bin `b = ⌊px/k⌋ + ⌊Wp/k⌋·⌊py/k⌋` (Wp is a multiple of k in Gemma 4), and
    `result[b, d] = round(Σ_{n in b} f32(x[n, d]) · f32(1/k²))` (the
    reference's one-hot matmul of weights `1/k²`, in f32, patches in order),
    rounded to the result type. Bins `b ≥ T` (the result's tokens) are
    dropped; bins no patch falls in are 0.

    Constraints:
    - C1: `kernel` > 0.
    - C2: `x` is `[N, D]` and `positions` `[N, 2]`.
    - C3: the result is `[T, D]` with `T` ≥ 1.

    ```mlir
    %p = sg.position_pool %h at %pos {kernel = 3 : i64}
        : (tensor<2520x1152xbf16>, tensor<2520x2xi32>) -> tensor<280x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_IntTensor:$positions,
                       I64Attr:$kernel);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `at` $positions attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_StandardizeOp : SG_Op<"standardize",
    [SG_RowWise, Pure, AttrSizedOperandSegments]> {
  let summary = "(x · pre_scale − bias) · scale per channel, in f32";
  let description = [{
    `result[n, d] = round((f32(x[n, d]) · pre_scale − f32(bias[d])) ·
    f32(scale[d]))`, every step in f32, one rounding; without `bias` and
    `scale`, `result = round(f32(x) · pre_scale)`. `pre_scale` is used as an
    f32 (Gemma 4: √D, a Python float). This is §G4.4 steps 4 and 6 as
    transformers ≥ 5.10.1 computes them (older versions round between the
    steps).

    Constraints:
    - C1: `pre_scale` is finite.
    - C2: `bias` and `scale` come together, each of shape `[D]` with `D` the
      last dimension of `x`.
    - C3: the result has the shape of `x`.

    ```mlir
    %s = sg.standardize %p bias(%b) scale(%s) {pre_scale = 33.941125496954285 : f64}
        : (tensor<280x1152xbf16>, tensor<1152xbf16>, tensor<1152xbf16>)
        -> tensor<280x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, Optional<SG_FloatTensor>:$bias,
                       Optional<SG_FloatTensor>:$scale, F64Attr:$pre_scale);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`bias` `(` $bias^ `)`)? (`scale` `(` $scale^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_MergeImageRowsOp : SG_Op<"merge_image_rows",
    [SG_RowWise, Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "image soft tokens in place of their placeholder rows";
  let description = [{
    The merge of a prompt's images into the text stream (gemma-vision.md
    §G3.5, §G4.7): `result[i] = round(embeds[i])` where `blocks[i] ≥ 0` (row
    `i` is an image placeholder; `embeds[i]` is its soft token, as the tower
    wrote it), else `x[i]` (the scaled text embedding). No embedding scale
    on image rows.

    Constraints:
    - C1: `x` is `[tokens, H]`.
    - C2: `embeds` has the shape of `x`.
    - C3: `blocks` is a rank-1 i32 tensor with the tokens of `x`.

    ```mlir
    %m = sg.merge_image_rows %h, %soft rows(%blocks)
        : (tensor<?x96xbf16>, tensor<?x96xf32>, tensor<?xi32>) -> tensor<?x96xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_FloatTensor:$embeds,
                       SG_IntTensor:$blocks);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $embeds `rows` `(` $blocks `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // SGC_DIALECTS_SG_IR_SGVISIONOPS_TD
