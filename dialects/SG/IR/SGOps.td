//===- SGOps.td - sg dialect operations --------------------*- tablegen -*-===//
//
// Part of sgc. The math of every op follows ../shared/design/gemma-text.md;
// each constraint Cn is checked in SGOps.cpp under the tag `<op>_cN` and has
// one negative case in test/Dialect/SG/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGOPS_TD
#define SGC_DIALECTS_SG_IR_SGOPS_TD

include "dialects/SG/IR/SGBase.td"
include "dialects/SG/IR/SGTypes.td"
include "dialects/SG/IR/SGInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Weights and embedding
//===----------------------------------------------------------------------===//

def SG_WeightOp : SG_Op<"weight", [SG_RowWise, Pure]> {
  let summary = "a checkpoint tensor, referenced by its name";
  let description = [{
    Yields the checkpoint tensor `name` (the safetensors key, e.g.
    `model.language_model.layers.0.self_attn.q_proj.weight`). The runtime
    binds the tensor by this name, checking dtype and shape against the
    result type before anything runs.

    Constraints:
    - C1: `name` is not empty.
    - C2: the result has a static shape.
    - C3: a block-encoded weight (`!sg.quant`) is a `[rows, K]` matrix
      whose K is a whole number of the encoding's blocks.

    ```mlir
    %w = sg.weight "language_model.model.norm.weight" : tensor<3840xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs SG_WeightTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def SG_EmbedOp : SG_Op<"embed", [Pure]> {
  let summary = "embedding lookup times a scale";
  let description = [{
    `result[s, :] = round(table[ids[s], :] × scale)` in the result's element
    type, the product computed in f32; an f16 table under a bf16 result is
    read as `bf16(table)` (as `sg.linear` reads an f16 weight). Gemma uses `scale = √H` cast to the
    compute dtype (62.0 / 73.5 in bf16), which the importer has already
    rounded; the op multiplies by exactly the stored value.

    Constraints:
    - C1: `table` has rank 2 `[V, H]` and `ids` rank 1.
    - C2: the result is `[len(ids), H]`.
    - C3: `scale` is finite and > 0.
    - C4: a block-encoded table (`!sg.quant`) has rows of whole blocks; a
      row is dequantized as `sg.linear` reads a weight.

    ```mlir
    %h = sg.embed %table[%ids] scale(6.200000e+01)
        : (tensor<262208x3840xbf16>, tensor<?xi32>) -> tensor<?x3840xbf16>
    ```
  }];
  let arguments = (ins SG_WeightTensor:$table, SG_IntTensor:$ids,
                       F64Attr:$scale);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` `scale` `(` $scale `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization and projections
//===----------------------------------------------------------------------===//

def SG_RMSNormOp : SG_Op<"rms_norm", [SG_RowWise, Pure]> {
  let summary = "RMSNorm over the last dimension, optional weight";
  let description = [{
    Over the last dimension `d` of `x`, in f32:
    `n = x · (mean_d(x²) + eps)^(-1/2)`, then
    `result = round(n · (weight_offset + w))` with a weight, or
    `result = round(n)` without one (Gemma 4's parameter-free V norm).
    Gemma 3 uses `weight_offset = 1` (`x̂·(1+w)`, `1+w` formed in f32),
    Gemma 4 `weight_offset = 0`. On a `[tokens, heads, D]` input with a `[D]`
    weight this is the per-head q/k norm, one weight shared by all heads.

    Constraints:
    - C1: `eps` is finite and > 0.
    - C2: `weight_offset` is 0 or 1.
    - C3: `weight`, when present, has rank 1 and the size of the last
      dimension of `x`.
    - C4: without a weight, `weight_offset` is 0.
    - C5: the result has the shape of `x`.

    ```mlir
    %n = sg.rms_norm %x, %w {eps = 1.0e-06 : f64, weight_offset = 1 : i64}
        : (tensor<?x3840xbf16>, tensor<3840xbf16>) -> tensor<?x3840xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, Optional<SG_FloatTensor>:$weight,
                       F64Attr:$eps, I64Attr:$weight_offset);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`,` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_LinearOp : SG_Op<"linear", [SG_RowWise, Pure,
    DeclareOpInterfaceMethods<SG_ProjectionOpInterface>]> {
  let summary = "y = x · Wᵀ (+ b) with an f32 accumulator";
  let description = [{
    `result[..., n] = round(Σ_k x[..., k] · w[n, k] + f32(b[n]))`, products
    and sum in f32 (in order k = 0..in−1), the bias (when present) added to
    the f32 sum, one rounding to the result type. `w` is `[out, in]` as the
    checkpoint stores it; it may have another element type than `x` (bf16
    weights with an f32 compute dtype). An f16 weight under a bf16 result
    is read as `bf16(w)` (the reference runs an F16 checkpoint in bf16 by
    casting its weights), under an f32 result exactly; the fused
    projections (norm_linear, gated_mlp, the softcap head) read their
    weights the same way. The vision towers' projections carry
    biases (SigLIP q/k/v/o, fc1/fc2, the patch embedding); the decoder's
    have none.

    Two weight forms keep the checkpoint's shape (the runtime checks it):
    a weight of rank > 2 `[out, d1, …, dm]` is used as `[out, d1·…·dm]`,
    row-major (SigLIP's patch convolution `[D, 3, 14, 14]` is a GEMM over
    the patch vector in (channel, ky, kx) order); with
    `weight_layout = "in_out"` the weight is stored `[in, out]` and applied
    as `x · w` (Gemma 3's `mm_input_projection_weight`): `w[k, n]` in place
    of `w[n, k]`. `weight_layout = "out_in"` is the default form.

    Constraints:
    - C1: `w` has rank ≥ 2 and `x` rank ≥ 1.
    - C2: the last dimension of `x` equals `in` (the product of `w`'s
      dimensions after the first; dimension 0 with `in_out`).
    - C3: the result is `x`'s shape with the last dimension replaced by
      `out` (dimension 0 of `w`; dimension 1 with `in_out`).
    - C4: `bias`, when present, has shape `[out]`.
    - C5: `weight_layout` is `out_in` or `in_out`; `in_out` takes a rank-2
      weight.
    - C6: a block-encoded weight (`!sg.quant<"Q4_0">`, read as its
      dequantized value, see the type) is a rank-2 `out_in` weight whose K
      is a whole number of blocks.

    ```mlir
    %q = sg.linear %x, %wq
        : (tensor<?x3840xbf16>, tensor<4096x3840xbf16>) -> tensor<?x4096xbf16>
    %v = sg.linear %y, %wv bias(%bv)
        : (tensor<4096x1152xbf16>, tensor<1152x1152xbf16>, tensor<1152xbf16>)
        -> tensor<4096x1152xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_WeightTensor:$w,
                       Optional<SG_FloatTensor>:$bias,
                       OptionalAttr<StrAttr>:$weight_layout);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`bias` `(` $bias^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [
    // The bias-free linear of the decoder.
    OpBuilder<(ins "Type":$result, "Value":$x, "Value":$w), [{
      build($_builder, $_state, result, x, w, Value(), StringAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The weight is stored [in, out] (`weight_layout = "in_out"`).
    bool isInOut() { return getWeightLayout() == "in_out"; }
    /// The decoder's form: no bias, a rank-2 [out, in] weight. Only this
    /// form fuses into sg.norm_linear and has a CUDA kernel.
    bool isPlain() {
      return !getBias() && !isInOut() && getW().getType().getRank() == 2;
    }
  }];
}

def SG_SplitHeadsOp : SG_Op<"split_heads", [Pure]> {
  let summary = "view [tokens, heads·D] as [tokens, heads, D]";
  let description = [{
    `result[s, h, d] = x[s, h·D + d]`: head `h` is columns `h·D … h·D+D−1`.

    Constraints:
    - C1: `x` has rank 2 and the result rank 3, with equal token dimensions.
    - C2: heads × D of the result equals the width of `x`.

    ```mlir
    %qh = sg.split_heads %q : tensor<?x4096xbf16> -> tensor<?x16x256xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def SG_MergeHeadsOp : SG_Op<"merge_heads", [Pure]> {
  let summary = "view [tokens, heads, D] as [tokens, heads·D]";
  let description = [{
    The inverse of `sg.split_heads`: `result[s, h·D + d] = x[s, h, d]`
    (head-major concatenation, as before `o_proj`).

    Constraints:
    - C1: `x` has rank 3 and the result rank 2, with equal token dimensions.
    - C2: the result width equals heads × D of `x`.

    ```mlir
    %o = sg.merge_heads %a : tensor<?x16x256xbf16> -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rows of a batched decode step
//===----------------------------------------------------------------------===//

def SG_TakeRowOp : SG_Op<"take_row", [Pure]> {
  let summary = "row `row` of [B, ...] as [1, ...]";
  let description = [{
    A batched decode step (`sg-specialize`'s `@decode_b<B>`) computes the
    projections of its B sequences together and each sequence's attention
    on its own row: `result[0, ...] = x[row, ...]`.

    Constraints:
    - C1: `x` has rank >= 1 and a static leading dimension that `row` is
      inside; the result is `x`'s type with a leading 1.

    ```mlir
    %r = sg.take_row %q[2] : tensor<4x4096xbf16> -> tensor<1x4096xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, I64Attr:$row);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat =
      "$x `[` $row `]` attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def SG_StackRowsOp : SG_Op<"stack_rows", [Pure]> {
  let summary = "rows [1, ...] each, stacked into [B, ...]";
  let description = [{
    The inverse of `sg.take_row`: `result[b, ...] = rows[b][0, ...]`.

    Constraints:
    - C1: at least one row; every row has the same type, leading
      dimension 1; the result is that type with a leading B.

    ```mlir
    %o = sg.stack_rows %o0, %o1 : tensor<1x4096xbf16>, tensor<1x4096xbf16>
        -> tensor<2x4096xbf16>
    ```
  }];
  let arguments = (ins Variadic<SG_FloatTensor>:$rows);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat =
      "$rows attr-dict `:` type($rows) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

def SG_RopeOp : SG_Op<"rope", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "rotary position embedding, rotate_half convention";
  let description = [{
    For token `i` at position `p = pos0 + i` and `k < D/2`:
    `inv_freq[k] = 1 / theta^(2k/D) / factor`, `a = p · inv_freq[k]`
    (f32), `c = round(cos a)`, `s = round(sin a)` in the element type, and
    with the halves paired as `(d, d + D/2)`:
    `y[d] = x[d]·c − x[d+D/2]·s`, `y[d+D/2] = x[d+D/2]·c + x[d]·s`,
    each product and the sum rounded to the element type. `factor` is the
    linear scaling (Gemma 3 full layers: 8, i.e. positions ÷ 8).

    Constraints:
    - C1: `x` has rank 3 `[tokens, heads, D]`.
    - C2: `D` is even.
    - C3: `theta` is finite and > 0.
    - C4: `factor` is finite and > 0.

    ```mlir
    %r = sg.rope %q at %pos0 {theta = 1.0e+04 : f64, factor = 1.0 : f64}
        : tensor<?x16x256xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_Position:$pos0, F64Attr:$theta,
                       DefaultValuedAttr<F64Attr, "1.0">:$factor);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `at` $pos0 attr-dict `:` type($x)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "Value":$x, "Value":$pos0, "double":$theta,
                   "double":$factor), [{
      build($_builder, $_state, x.getType(), x, pos0,
            $_builder.getF64FloatAttr(theta),
            $_builder.getF64FloatAttr(factor));
    }]>
  ];
}

def SG_PartialRopeOp : SG_Op<"partial_rope",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "RoPE on a fraction of the frequencies (Gemma 4 proportional)";
  let description = [{
    Gemma 4's "proportional" RoPE. With `D` the head width and
    `A = rotary_fraction · D / 2` rotated frequencies:
    `inv_freq[k] = 1 / theta^(2k/B)` for `k < A` and `0` for `A ≤ k < D/2`,
    where the exponent basis `B` is `D` for `basis = "head_width"` (what
    Gemma 4 does) and `2A` for `basis = "rotated_width"`. The rotation is
    `rotate_half` over **all** `D` channels, so the rotated pairs are
    `(d, d + D/2)` for `d < A`, *not* the first `rotary_fraction · D`
    channels; channels with zero frequency pass through unchanged
    (`x·1 + (±x)·0 = x`). Rounding as in `sg.rope`.

    Constraints:
    - C1: `x` has rank 3 `[tokens, heads, D]`.
    - C2: `D` is even.
    - C3: `rotary_fraction` is in (0, 1].
    - C4: the rotated width `rotary_fraction · D` is a whole, even number
      (whole frequency pairs).
    - C5: `theta` is finite and > 0.
    - C6: `basis` is `head_width` or `rotated_width`.

    ```mlir
    %r = sg.partial_rope %k at %pos0 {theta = 1.0e+06 : f64,
        rotary_fraction = 2.5e-01 : f64, basis = "head_width"}
        : tensor<?x4x512xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_Position:$pos0, F64Attr:$theta,
                       F64Attr:$rotary_fraction, StrAttr:$basis);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `at` $pos0 attr-dict `:` type($x)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention and the KV cache
//===----------------------------------------------------------------------===//

class SG_AttnOpBase<string mnemonic, list<Trait> traits = []>
    : SG_Op<mnemonic, !listconcat([Pure,
        DeclareOpInterfaceMethods<SG_AttentionOpInterface>], traits)> {
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v `cache` `(` $k_cache `,` $v_cache `)` `at` $pos0
    (`blocks` `(` $blocks^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_SlidingAttnOp : SG_AttnOpBase<"sliding_attn"> {
  let summary = "causal sliding-window attention over a ring KV cache";
  let description = [{
    Query `i` of the chunk sits at position `p = pos0 + i`. It attends over
    the keys at positions `j` with `0 ≤ p − j < window`: those before the
    chunk (`j < pos0`) are read from the caches *as they were before this
    chunk*, ring slot `j mod window`; those inside the chunk come from `k`
    and `v`. Reading the pre-write ring lets one chunk be longer than the
    window. `sg.kv_write` records the chunk afterwards.

    Per query head `h`, with kv head `g = ⌊h / (Hq/Hkv)⌋` (GQA, heads
    repeated in blocks): `s_j = round(round(q·k_j) × scale)`,
    `P = round(softmax_f32(s))`, `result = round(Σ_j P_j · v_j)`.

    With `blocks` (prefill with an image in the prompt: one image-block id
    per query row, −1 for a text row) query `i` also sees the keys of the
    chunk ahead of it in its own block: key `j` is visible when
    `p − window < j` and (`j ≤ p` or `blocks[i] = blocks[j − pos0] ≥ 0`).
    The window still bounds how far back a query looks. Keys before the
    chunk are never in a query's block (a chunk never splits an image
    block). A masked key's probability is exactly 0. Without `blocks` the
    mask is the causal one above.

    Constraints:
    - C1: `q`, `k`, `v` and both caches have rank 3
      (`[tokens, heads, D]`, caches `[slots, heads, D]`).
    - C2: `window` > 0.
    - C3: the query heads are a multiple of the key/value heads.
    - C4: `k` and `v` have the token count of `q`; `q` and `k` the same head
      width; the caches the heads and widths of `k` and `v`.
    - C5: the caches have exactly `window` slots (a ring).
    - C6: `scale` is finite and > 0.
    - C7: the result is `[tokens, Hq, Dv]` (Dv: the head width of `v`).
    - C8: `blocks`, when present, is a rank-1 tensor of i32.
    - C9: `blocks`, when present, has the token count of `q`.

    ```mlir
    %a = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos0
        {window = 1024 : i64, scale = 6.250000e-02 : f64}
        : (tensor<?x16x256xbf16>, tensor<?x8x256xbf16>, tensor<?x8x256xbf16>,
           tensor<1024x8x256xbf16>, tensor<1024x8x256xbf16>, i64)
        -> tensor<?x16x256xbf16>
    %b = sg.sliding_attn %q, %k, %v cache(%kc, %vc) at %pos0 blocks(%ids)
        {window = 1024 : i64, scale = 6.250000e-02 : f64}
        : (tensor<?x16x256xbf16>, tensor<?x8x256xbf16>, tensor<?x8x256xbf16>,
           tensor<1024x8x256xbf16>, tensor<1024x8x256xbf16>, i64,
           tensor<?xi32>) -> tensor<?x16x256xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$q, SG_FloatTensor:$k,
                       SG_FloatTensor:$v, SG_FloatTensor:$k_cache,
                       SG_FloatTensor:$v_cache, SG_Position:$pos0,
                       Optional<SG_IntTensor>:$blocks,
                       I64Attr:$window, F64Attr:$scale);
  // The text decoder's form, without image blocks.
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$q, "Value":$k, "Value":$v,
                   "Value":$k_cache, "Value":$v_cache, "Value":$pos0,
                   "IntegerAttr":$window, "FloatAttr":$scale), [{
      build($_builder, $_state, result, q, k, v, k_cache, v_cache, pos0,
            /*blocks=*/Value(), window, scale);
    }]>
  ];
}

def SG_FullAttnOp : SG_AttnOpBase<"full_attn", [AttrSizedOperandSegments]> {
  let summary = "causal attention over a full-length KV cache";
  let description = [{
    Query `i` at position `p = pos0 + i` attends over every position
    `j ≤ p`: `j < pos0` from the caches as they were before this chunk
    (slot `j`), the rest from `k` and `v`. Scores, softmax and GQA as in
    `sg.sliding_attn`.

    With `blocks` (one image-block id per query row, −1 for text; Gemma 3's
    full layers in a prefill with an image) query `i` also sees the chunk's
    keys ahead of it in its own block: key `j` is visible when `j ≤ p` or
    `blocks[i] = blocks[j − pos0] ≥ 0`. Gemma 4's full layers are causal
    and get no `blocks`.

    `v_from_k` records that V was derived from the raw K projection (Gemma 4
    full layers, `attention_k_eq_v`): the importer wires that value into
    `v`; the attribute keeps the fact visible to passes and `sgc explain`.

    With `keys_from_values(%w)` the cache stores V only (K = V: half the
    bytes): `k_cache` is `v_cache`, `k` is `v`, and the key of position `j`,
    cached or in the chunk, is rebuilt from its value row `v_j` as the RoPE
    (`sg.partial_rope` with `key_theta`, `key_rotary_fraction`, `key_basis`)
    at position `j` of `round(v_j · w)`: k_norm of the raw projection,
    rounded from the rounded V (the reference rounds k_norm of the raw
    projection once; the two differ by the rounding of V). Rebuilding the
    chunk's keys too keeps a chunked prefill equal to a whole one.

    Constraints:
    - C1: `q`, `k`, `v` and both caches have rank 3.
    - C2: both caches have the same number of slots, at least 1.
    - C3: the query heads are a multiple of the key/value heads.
    - C4: `k` and `v` have the token count of `q`; `q` and `k` the same head
      width; the caches the heads and widths of `k` and `v`.
    - C5: with `v_from_k`, `v` has the shape of `k`.
    - C6: `scale` is finite and > 0.
    - C7: the result is `[tokens, Hq, Dv]`.
    - C8: `blocks`, when present, is a rank-1 tensor of i32.
    - C9: `blocks`, when present, has the token count of `q`.
    - C10: with `keys_from_values`: `v_from_k` is set, `k_cache` and
      `v_cache` are one value, `k` and `v` are one value, the weight is `[D]`
      with `D` the head width
      of `k` and `v`, and `key_theta`, `key_rotary_fraction` and
      `key_basis` are set (C4–C6 of `sg.partial_rope`).

    ```mlir
    %a = sg.full_attn %q, %k, %v cache(%kc, %vc) at %pos0
        {scale = 1.000000e+00 : f64, v_from_k}
        : (tensor<?x32x512xbf16>, tensor<?x4x512xbf16>, tensor<?x4x512xbf16>,
           tensor<262144x4x512xbf16>, tensor<262144x4x512xbf16>, i64)
        -> tensor<?x32x512xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$q, SG_FloatTensor:$k,
                       SG_FloatTensor:$v, SG_FloatTensor:$k_cache,
                       SG_FloatTensor:$v_cache, SG_Position:$pos0,
                       Optional<SG_IntTensor>:$blocks,
                       Optional<SG_FloatTensor>:$key_weight,
                       F64Attr:$scale, UnitAttr:$v_from_k,
                       OptionalAttr<F64Attr>:$key_theta,
                       OptionalAttr<F64Attr>:$key_rotary_fraction,
                       OptionalAttr<StrAttr>:$key_basis);
  let assemblyFormat = [{
    $q `,` $k `,` $v `cache` `(` $k_cache `,` $v_cache `)` `at` $pos0
    (`blocks` `(` $blocks^ `)`)?
    (`keys_from_values` `(` $key_weight^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  // The text decoder's form, without image blocks or rebuilt keys.
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$q, "Value":$k, "Value":$v,
                   "Value":$k_cache, "Value":$v_cache, "Value":$pos0,
                   "FloatAttr":$scale, "UnitAttr":$v_from_k), [{
      build($_builder, $_state, result, q, k, v, k_cache, v_cache, pos0,
            /*blocks=*/Value(), /*key_weight=*/Value(), scale, v_from_k,
            FloatAttr(), FloatAttr(), StringAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the cache holds V only and cached keys are rebuilt from it.
    bool keysFromValues() { return static_cast<bool>(getKeyWeight()); }
  }];
}

def SG_KVWriteOp : SG_Op<"kv_write",
    [Pure, AllTypesMatch<["cache", "result"]>]> {
  let summary = "write a chunk's keys or values into a KV cache";
  let description = [{
    `result = cache` with token `i` of `values` stored at slot
    `(pos0 + i) mod window` when `window` is set (a ring of exactly `window`
    slots, sliding layers), else at slot `pos0 + i` (full layers). When the
    chunk is longer than a ring, the last `window` tokens win.

    Constraints:
    - C1: `cache` and `values` have rank 3.
    - C2: `values` has the heads and head width of `cache`.
    - C3: with `window`, `window` > 0 and `cache` has exactly `window` slots.

    ```mlir
    %kc2 = sg.kv_write %k into %kc at %pos0 {window = 1024 : i64}
        : tensor<?x8x256xbf16> into tensor<1024x8x256xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$values, SG_FloatTensor:$cache,
                       SG_Position:$pos0, OptionalAttr<I64Attr>:$window);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $values `into` $cache `at` $pos0 attr-dict `:` type($values) `into`
    type($cache)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def SG_GeluTanhOp : SG_Op<"gelu_tanh", [SG_RowWise, Pure, SameOperandsAndResultType]> {
  let summary = "GELU, tanh approximation";
  let description = [{
    `result = round(0.5·z·(1 + tanh(√(2/π)·(z + 0.044715·z³))))`, computed
    in f32 (`gelu(approximate="tanh")`).

    ```mlir
    %g = sg.gelu_tanh %x : tensor<?x15360xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def SG_MulOp : SG_Op<"mul", [SG_RowWise, Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "elementwise product";
  let description = [{
    `result = round(lhs · rhs)` (the gated MLP's `gelu(gate) ⊙ up`).

    ```mlir
    %p = sg.mul %a, %b : tensor<?x15360xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$lhs, SG_FloatTensor:$rhs);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def SG_AddOp : SG_Op<"add", [SG_RowWise, Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "elementwise sum (the residual add)";
  let description = [{
    `result = round(lhs + rhs)`.

    ```mlir
    %h = sg.add %r, %a : tensor<?x3840xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$lhs, SG_FloatTensor:$rhs);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def SG_LayerScalarOp : SG_Op<"layer_scalar",
    [SG_RowWise, Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "multiply the residual stream by a per-layer scalar";
  let description = [{
    `result = round(x · s[0])`: Gemma 4 multiplies the whole hidden state by
    the trained `layers.{l}.layer_scalar` after both residual adds.

    Constraints:
    - C1: `scalar` has exactly one element.

    ```mlir
    %h2 = sg.layer_scalar %h, %s : tensor<?x5376xbf16>, tensor<1xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, SG_FloatTensor:$scalar);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $scalar attr-dict `:` type($x) `,` type($scalar)
  }];
  let hasVerifier = 1;
}

def SG_SoftcapOp : SG_Op<"softcap", [SG_RowWise, Pure, SameOperandsAndResultType]> {
  let summary = "logit softcap: cap · tanh(x / cap)";
  let description = [{
    `result = round(round(tanh(round(x / cap))) · cap)`: three rounded
    elementwise steps, as the reference computes Gemma 4's final softcap.

    Constraints:
    - C1: `cap` is finite and > 0.

    ```mlir
    %l = sg.softcap %logits {cap = 3.000000e+01 : f64} : tensor<?x262144xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, F64Attr:$cap);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

include "dialects/SG/IR/SGVisionOps.td"
include "dialects/SG/IR/SGFusedOps.td"

//===----------------------------------------------------------------------===//
// Components that are validated but not lowered
//===----------------------------------------------------------------------===//

def SG_OpaqueComponentOp : SG_Op<"opaque_component"> {
  let summary = "a graph component imported but not lowered";
  let description = [{
    Stands for a whole component (the vision tower) that the importer has
    parsed and validated but that no pass lowers yet. It keeps the
    component's id, role and layer count visible in the IR.

    Constraints:
    - C1: `component` is not empty.

    ```mlir
    sg.opaque_component "vision" {role = "perception", num_layers = 27 : i64}
    ```
  }];
  let arguments = (ins StrAttr:$component);
  let assemblyFormat = "$component attr-dict";
  let hasVerifier = 1;
}

#endif // SGC_DIALECTS_SG_IR_SGOPS_TD
