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

    Discardable attributes (`sg.layer`, `sg.variant`, ...) carry what the
    importer and the passes tell later phases. Each is declared once, in
    `discardableAttrs` in SGBase.td, and read and written through its
    generated helper (`SGDialect::LayerAttrHelper`).
  }];
  // One line each: who sets it, on what, and what it says.
  let discardableAttrs = (ins
    // Importer, on each op of @forward but sg.weight: embed, layer or head.
    "::mlir::StringAttr":$block,
    // Importer, on the ops of a layer (later the call of its body): index.
    "::mlir::IntegerAttr":$layer,
    // sg-specialize, on an entry function: its variant (prefill, decode).
    "::mlir::StringAttr":$variant,
    // sg-specialize, on an entry function: the most tokens one call takes.
    "::mlir::IntegerAttr":$max_tokens,
    // Driver (sgc compile --decode-batch), on the module: the batch sizes
    // sg-specialize compiles batched decode variants (@decode_b<B>) for.
    "::mlir::DenseI64ArrayAttr":$decode_batch,
    // sg-specialize, on a batched decode variant (sg-outline-layers copies
    // it to its bodies): every row is summed as a one-row call sums it, so
    // a sequence's logits do not depend on the rows beside it.
    "::mlir::UnitAttr":$batch_invariant,
    // sg-outline-layers, on an outlined body: the block it was cut from.
    "::mlir::StringAttr":$body,
    // Importer, on sg.weight: the graph object whose binding names it.
    "::mlir::StringAttr":$object,
    // Importer, on sg.weight: other checkpoint names of the tensor.
    "::mlir::ArrayAttr":$alt_names,
    // Importer, on the module: the checkpoint's source artifact.
    "::mlir::StringAttr":$model_id,
    // Importer, on the module: the model family (gemma3, gemma4).
    "::mlir::StringAttr":$family,
    // Importer, on the module: the context length the graph serves.
    "::mlir::IntegerAttr":$context_length,
    // Importer, on the module: the activation dtype (bf16, f32).
    "::mlir::StringAttr":$compute_dtype,
    // Importer, on the module when it builds @encode_image: the image
    // token ids and geometry the runtime needs (image_token_id,
    // boi_token_id, eoi_token_id, patch_size, image_size, pooling_kernel).
    "::mlir::DictionaryAttr":$image,
    // sg-plan-kv-cache, on an entry function: the per-layer KV cache plan.
    "::mlir::ArrayAttr":$kv_plan,
    // sg-plan-kv-cache, on an entry function: the context the plan covers.
    "::mlir::IntegerAttr":$kv_context_length,
    // convert-sg-to-cpu, on a kernel function: the name of its spec.
    "::mlir::StringAttr":$kernel,
    // convert-sg-to-cpu, on a dispatcher: the kernel it runs by rows.
    "::mlir::FlatSymbolRefAttr":$dispatch,
    // convert-sg-to-cpu, on a dispatcher: the rows it spreads.
    "::mlir::IntegerAttr":$rows,
    // convert-sg-to-cpu, on a dispatcher: the fewest rows worth spreading
    // over the threads (64 when absent: a linear's rows are short work).
    "::mlir::IntegerAttr":$parallel_rows,
    // convert-sg-to-cpu, on a lowered body: per result, the argument it
    // updates in place (a KV cache), or -1 for an output buffer of its own.
    "::mlir::ArrayAttr":$result_slots,
    // Fusion passes: a fusion remark's data (diagnostic metadata, no op's).
    "::mlir::DictionaryAttr":$fusion_change,
    // convert-sg-to-gpu, on a plan.alloc: a buffer of the zeroed region
    // (counters the runtime's zeroed workspace starts and the kernels leave
    // at zero), which sg-plan-memory places past every entry's workspace.
    "::mlir::UnitAttr":$zeroed,
    // sg-select-kernels, on each op of a body: its kernel family and choices.
    "::mlir::sgc::sg::KernelAttr":$selected_kernel,
    // sg-select-kernels, on a plan.call: its body's first projection runs
    // the row chain the step before carried, in its prologue.
    "::mlir::UnitAttr":$carried_prologue
  );
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

/// Each row of the op's results (along the token dimension) depends only on
/// the same row of its activation operands: a plan may run an op made of
/// such ops on a subset of the rows (the prefill's LM head on the last one).
def SG_RowWise : NativeOpTrait<"RowWise"> {
  let cppNamespace = "::mlir::sgc::sg";
}

/// Base class of every sg op.
class SG_Op<string mnemonic, list<Trait> traits = []>
    : Op<SG_Dialect, mnemonic, traits>;

/// A ranked float tensor (activations and weights).
def SG_FloatTensor : RankedTensorOf<[AnyFloat]>;
/// A weight: float, or block-encoded (`!sg.quant<"Q4_0">`, SGTypes.td).
def SG_WeightTensor : RankedTensorOf<[AnyFloat,
    Type<CPred<"::llvm::isa<::mlir::sgc::sg::QuantType>($_self)">,
         "block-encoded weight", "::mlir::sgc::sg::QuantType">]>;
/// A ranked integer tensor (token ids).
def SG_IntTensor : RankedTensorOf<[AnySignlessInteger]>;
/// The absolute position of a chunk's first token.
def SG_Position : TypeAlias<I64, "position">;

#endif // SGC_DIALECTS_SG_IR_SGBASE_TD
