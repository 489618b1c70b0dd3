//===- SGFusedOps.td - ops the fusion phase makes ----------*- tablegen -*-===//
//
// Part of sgc. Included by SGOps.td at this point of its op list.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGFUSEDOPS_TD
#define SGC_DIALECTS_SG_IR_SGFUSEDOPS_TD

//===----------------------------------------------------------------------===//
// Fused ops (made by the fusion phase; compiler/Transforms/Fuse*.cpp)
//===----------------------------------------------------------------------===//

def SG_NormLinearOp : SG_Op<"norm_linear", [SG_RowWise, Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SG_ProjectionOpInterface>]> {
  let summary = "optional RMSNorm, then several linears of the same input";
  let description = [{
    `n = round(rms_norm(x))` exactly as `sg.rms_norm` computes it (when
    `eps` is set; else `n = x`), then `result_i = round(n · w_iᵀ)` as
    `sg.linear` computes it, and, with `softcap`, the three rounded steps of
    `sg.softcap` on the single result. One op stands for the norm and every
    projection that reads it (q/k/v after input_layernorm; the final norm,
    the tied LM head and the softcap), so one kernel streams all the rows
    and the normalized input is never written out. Results are bit-identical
    to the unfused ops.

    Constraints:
    - C1: at least one weight, one result per weight.
    - C2: `x` has rank 2; every weight is `[out_i, in]` with `in` the width
      of `x`; result i is `[tokens, out_i]`.
    - C3: with `eps`: `eps` > 0 and `weight_offset` 0 or 1; a norm weight
      has shape `[in]`; without a norm weight `weight_offset` is 0.
    - C4: without `eps` there is no norm weight.
    - C5: `softcap` > 0, and only with one weight.

    ```mlir
    %q, %k, %v = sg.norm_linear %x norm(%wn) weights(%wq, %wk, %wv)
        {eps = 1.0e-06 : f64, weight_offset = 0 : i64}
        : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<64x96xbf16>,
           tensor<32x96xbf16>, tensor<32x96xbf16>)
        -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x32xbf16>)
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, Optional<SG_FloatTensor>:$norm_weight,
                       Variadic<SG_WeightTensor>:$weights,
                       OptionalAttr<F64Attr>:$eps,
                       DefaultValuedAttr<I64Attr, "0">:$weight_offset,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs Variadic<SG_FloatTensor>:$results);
  let assemblyFormat = [{
    $x (`norm` `(` $norm_weight^ `)`)? `weights` `(` $weights `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_GatedMLPOp : SG_Op<"gated_mlp", [SG_RowWise, Pure,
    DeclareOpInterfaceMethods<SG_ProjectionOpInterface>]> {
  let summary = "RMSNorm, gate and up projections, GELU-tanh and product";
  let description = [{
    `n = round(rms_norm(x))` (when `eps` is set), `g = round(n · w_gateᵀ)`,
    `u = round(n · w_upᵀ)`, `result = round(round(gelu_tanh(g)) · u)`: the
    gated MLP up to (not including) the down projection, with every rounding
    of the unfused ops. One kernel streams both weights row by row.

    Constraints:
    - C1: `x` has rank 2; `gate` and `up` are both `[ffn, in]` with `in`
      the width of `x`; the result is `[tokens, ffn]`.
    - C2: with `eps`: `eps` > 0, `weight_offset` 0 or 1, a norm weight of
      shape `[in]`; without `eps` no norm weight.

    ```mlir
    %p = sg.gated_mlp %x norm(%wn) gate(%wg) up(%wu)
        {eps = 1.0e-06 : f64, weight_offset = 0 : i64}
        : (tensor<?x96xbf16>, tensor<96xbf16>, tensor<192x96xbf16>,
           tensor<192x96xbf16>) -> tensor<?x192xbf16>
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, Optional<SG_FloatTensor>:$norm_weight,
                       SG_WeightTensor:$gate, SG_WeightTensor:$up,
                       OptionalAttr<F64Attr>:$eps,
                       DefaultValuedAttr<I64Attr, "0">:$weight_offset);
  let results = (outs SG_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`norm` `(` $norm_weight^ `)`)? `gate` `(` $gate `)` `up` `(` $up `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def SG_NormRopeOp : SG_Op<"norm_rope", [Pure, AttrSizedOperandSegments]> {
  let summary = "per-head RMSNorm, RoPE, and the write into a KV cache";
  let description = [{
    `n = round(rms_norm(x))` over the head width, exactly as `sg.rms_norm`
    (with a weight, or without: Gemma 4's V norm), then, when `theta` is
    set, `y = rope(n)` as `sg.rope` (with `factor`) or, with
    `rotary_fraction`, as `sg.partial_rope`; else `y = n`. With a `cache`,
    `new_cache` is `sg.kv_write(y, cache)` (a ring of `window` slots when
    `window` is set). One op for what the unfused IR does in two to four, so
    a head is read once, normalized, rotated and stored (and cached) in one
    loop nest. Attention still reads the cache as it was before the chunk:
    the lowering writes the cache after the cache's last reader when a chunk
    could overwrite positions still in view.

    Constraints:
    - C1: `x` has rank 3 `[tokens, heads, D]`; the result has its type.
    - C2: `eps` > 0; `weight_offset` 0 or 1 (0 without a norm weight); a norm
      weight has shape `[D]`.
    - C3: with `theta`: `D` even, `theta` > 0, `factor` > 0; with
      `rotary_fraction` (only with `theta`): in (0, 1], an even rotated width,
      `basis` head_width or rotated_width.
    - C4: `new_cache` exactly when `cache`, of the cache's type; the cache is
      `[slots, heads, D]`; with `window`, `slots` = `window` > 0.

    ```mlir
    %k, %kc2 = sg.norm_rope %kh norm(%w) at %pos0 into %kc
        {eps = 1.0e-06 : f64, weight_offset = 0 : i64, theta = 1.0e+04 : f64,
         window = 1024 : i64}
        : (tensor<?x16x256xbf16>, tensor<256xbf16>, i64, tensor<1024x16x256xbf16>)
        -> (tensor<?x16x256xbf16>, tensor<1024x16x256xbf16>)
    ```
  }];
  let arguments = (ins SG_FloatTensor:$x, Optional<SG_FloatTensor>:$norm_weight,
                       SG_Position:$pos0, Optional<SG_FloatTensor>:$cache,
                       F64Attr:$eps,
                       DefaultValuedAttr<I64Attr, "0">:$weight_offset,
                       OptionalAttr<F64Attr>:$theta,
                       DefaultValuedAttr<F64Attr, "1.0">:$factor,
                       OptionalAttr<F64Attr>:$rotary_fraction,
                       OptionalAttr<StrAttr>:$basis,
                       OptionalAttr<I64Attr>:$window);
  let results = (outs SG_FloatTensor:$result,
                      Optional<SG_FloatTensor>:$new_cache);
  let assemblyFormat = [{
    $x (`norm` `(` $norm_weight^ `)`)? `at` $pos0 (`into` $cache^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // SGC_DIALECTS_SG_IR_SGFUSEDOPS_TD
