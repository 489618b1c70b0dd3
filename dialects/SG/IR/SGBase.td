//===- SGBase.td - sg dialect definition and base classes --*- tablegen -*-===//
//
// Part of sgc. The sg dialect models an LLM decoder at the level of the
// reference implementation: whole-tensor ops with value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGBASE_TD
#define SGC_DIALECTS_SG_IR_SGBASE_TD

include "mlir/IR/OpBase.td"

def SG_Dialect : Dialect {
  let name = "sg";
  let cppNamespace = "::mlir::sgc::sg";
  let summary = "Model-level ops of the sgc graph compiler";
  let description = [{
    The `sg` dialect holds one op per step of a Gemma-style decoder forward
    pass as Hugging Face transformers computes it: embedding lookup with a
    scale, RMSNorm variants, linear projections, RoPE and partial RoPE,
    sliding-window and full attention over an explicit KV cache, the KV
    cache write, GELU-tanh, the gated product, the residual add, the Gemma 4
    layer scalar and the final logit softcap.

    Ops work on builtin ranked tensors with value semantics. Activations are
    laid out `[tokens, ...]` (batch 1); weights are `[out, in]` as stored in
    the checkpoint and are introduced by `sg.weight` with their checkpoint
    tensor name. Positions are a scalar `i64` start position of the chunk;
    token `i` of a chunk sits at absolute position `pos0 + i`.

    Every op states its math and numbered constraints `C1…Cn`; the verifier
    checks carry the same tags (`sliding_attn_c3`) and each tag has a
    negative test in `test/Dialect/SG/invalid.mlir`.
  }];
}

/// Base class of every sg op.
class SG_Op<string mnemonic, list<Trait> traits = []>
    : Op<SG_Dialect, mnemonic, traits>;

/// A ranked float tensor (activations and weights).
def SG_FloatTensor : RankedTensorOf<[AnyFloat]>;
/// A ranked integer tensor (token ids).
def SG_IntTensor : RankedTensorOf<[AnySignlessInteger]>;
/// The absolute position of a chunk's first token.
def SG_Position : TypeAlias<I64, "position">;

#endif // SGC_DIALECTS_SG_IR_SGBASE_TD
