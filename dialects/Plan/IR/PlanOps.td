//===- PlanOps.td - plan dialect ops -----------------------*- tablegen -*-===//
//
// Part of sgc. Each op lists its constraints C1…Cn; the verifier checks
// carry the same tags (`call_c2`).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_PLAN_IR_PLANOPS_TD
#define SGC_DIALECTS_PLAN_IR_PLANOPS_TD

include "dialects/Plan/IR/PlanBase.td"
include "dialects/Plan/IR/PlanInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// The tables: manifest and KV plan
//===----------------------------------------------------------------------===//

def Plan_TensorOp : Plan_Op<"tensor", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A checkpoint tensor the model binds (a manifest entry)";
  let description = [{
    The symbol is the tensor's name in the checkpoint. `alt` lists other
    spellings the runtime may find it under (the model family's prefixes).
    `fill` is what `--load-format=dummy` writes (ones for `x * w` norm weights
    and layer scalars, zeros for `x * (1 + w)` norm weights). `object` is the
    schema-6 graph object the tensor belongs to, for diagnostics.
    The manifest's order is the order of these ops in the module.

    Constraints:
    - C1: the type is a ranked tensor of static shape, rank ≤ 8.

    Example:
    ```mlir
    plan.tensor @"model.embed_tokens.weight" : tensor<512x96xbf16> fill(random)
        object("target.embedding")
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       Plan_Fill:$fill, OptionalAttr<StrAttr>:$object,
                       OptionalAttr<StrArrayAttr>:$alt);
  let assemblyFormat = [{
    $sym_name `:` $type `fill` `(` $fill `)` (`object` `(` $object^ `)`)?
    (`alt` $alt^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::dyn_cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Plan_KVLayerOp : Plan_Op<"kv_layer", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "One decoder layer's KV cache";
  let description = [{
    A `ring` layer holds `slots` = window positions (slot = pos mod slots), a
    `full` layer one slot per position of the context. The K buffer is
    `[slots, kv_heads, head_dim]`, the V buffer `[slots, kv_heads,
    v_head_dim]`, both of `element_type`. `v_from_k` records that V is derived
    from the K projection (Gemma 4 full layers). With `keys_from_values` the
    layer has one buffer, the K buffer, and it holds V (the keys are rebuilt
    from it when read): no step names the V buffer. The ABI's layer order is
    the order of these ops.

    Constraints:
    - C1: slots, kv_heads, head_dim and v_head_dim are positive.
    - C2: `layer` equals the number of kv_layer ops before this one.
    - C3: `keys_from_values` only with `v_from_k` and equal head dims.

    Example:
    ```mlir
    plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Plan_KVKind:$kind,
                       I64Attr:$layer, I64Attr:$slots, I64Attr:$kv_heads,
                       I64Attr:$head_dim, I64Attr:$v_head_dim,
                       TypeAttr:$element_type, UnitAttr:$v_from_k,
                       UnitAttr:$keys_from_values);
  let assemblyFormat = [{
    $sym_name $kind `layer` `(` $layer `)` `slots` `(` $slots `)`
    `kv_heads` `(` $kv_heads `)` `head_dim` `(` $head_dim `,` $v_head_dim `)`
    `:` $element_type (`v_from_k` $v_from_k^)?
    (`keys_from_values` $keys_from_values^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// Cache bytes of one slot, over the layer's buffers.
    int64_t bytesPerSlot() {
      int64_t dims = getKeysFromValues() ? getVHeadDim()
                                         : getHeadDim() + getVHeadDim();
      return getKvHeads() * dims *
             ((getElementType().getIntOrFloatBitWidth() + 7) / 8);
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

def Plan_EntryOp : Plan_Op<"entry", [Symbol, IsolatedFromAbove,
    HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "One entry point of the model: its buffers and steps";
  let description = [{
    The block's arguments are the call's tokens (`!plan.buffer<?xi32>`, or
    `<1xi32>` for decode) and its start position (`i64`); an `encode_image`
    entry (the vision tower) takes one image's patches instead
    (`!plan.buffer<NxPxf32>`, P values per patch) and their (column, row)
    positions (`!plan.buffer<Nx2xi32>`, −1 for padding), and returns its
    soft tokens `[T, text hidden]` where the others return logits.
    `max_tokens` bounds the token count (the patch count N for images); `workspace` (set by sg-plan-memory) is the bytes of
    scratch memory the entry's `plan.alloc` buffers occupy.

    Constraints:
    - C1: the block has two arguments: a rank-1 i32 buffer and an i64;
      a `prefill` of a model with images two more, the prompt rows' soft
      tokens `[?, H]` f32 and image blocks `[?]` i32 (−1 on text rows);
      for `encode_image`, an `[N, P]` f32 buffer and an `[N, 2]` i32 buffer.
    - C2: `max_tokens` ≥ 1, and a static token dimension does not exceed it;
      for `encode_image`, `max_tokens` is N.
    - C3: every buffer a call reads was written before: an alloc is an
      output of an earlier call before any call takes it as an input.
    - C4: either every alloc has an offset or none has; with offsets, the
      entry has a `workspace` size.
    - C5: an offset is a multiple of 64 and the buffer ends within the
      workspace (dynamic dimensions counted at `max_tokens`).
    - C6: two allocs that are live at the same time (from the call that
      writes one first to the last call that reads it, the logits to the end)
      share no byte.

    Example:
    ```mlir
    plan.entry @decode decode max_tokens(1) workspace(1024) {
    ^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
      %w = plan.weight @"embed.weight" : !plan.buffer<512x96xbf16>
      %h = plan.alloc offset(0) : !plan.buffer<1x96xbf16>
      plan.call @decode_embed(%tokens, %w) -> (%h) : (!plan.buffer<1xi32>,
          !plan.buffer<512x96xbf16>) -> (!plan.buffer<1x96xbf16>)
      plan.return %h : !plan.buffer<1x96xbf16>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Plan_EntryKind:$kind,
                       I64Attr:$max_tokens, OptionalAttr<I64Attr>:$workspace);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $kind `max_tokens` `(` $max_tokens `)`
    (`workspace` `(` $workspace^ `)`)? attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
    ::mlir::Value getTokens() { return getBlock().getArgument(0); }
    ::mlir::Value getPosition() { return getBlock().getArgument(1); }
    /// The same two arguments of an encode_image entry.
    ::mlir::Value getPixels() { return getBlock().getArgument(0); }
    ::mlir::Value getPatchPositions() { return getBlock().getArgument(1); }
    /// entry_c3 to entry_c6 (every kind).
    ::mlir::LogicalResult verifyBuffers();
  }];
}

def Plan_WeightOp : Plan_Op<"weight", [HasParent<"EntryOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The buffer of a manifest tensor";
  let description = [{
    Constraints:
    - C1: `tensor` names a `plan.tensor`.
    - C2: the buffer has the tensor's shape and element type; a
      block-encoded tensor (`!sg.quant`) is held as its bytes: an i8
      buffer with the tensor's leading dimensions.
  }];
  let arguments = (ins FlatSymbolRefAttr:$tensor);
  let results = (outs Plan_AnyBuffer:$result);
  let assemblyFormat = "$tensor attr-dict `:` qualified(type($result))";
}

def Plan_KVCacheOp : Plan_Op<"kv_cache", [HasParent<"EntryOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The K or V buffer of a layer's cache";
  let description = [{
    Constraints:
    - C1: `layer` names a `plan.kv_layer`.
    - C2: the buffer is `[slots, kv_heads, head_dim]` (key) or `[slots,
      kv_heads, v_head_dim]` (value) of the layer's element type.
    - C3: `row` (the cache of the sequence on that row of a `decode_batch`
      entry) is given exactly in a `decode_batch` entry, below its
      `max_tokens`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$layer, Plan_CacheHalf:$half,
                       OptionalAttr<I64Attr>:$row);
  let results = (outs Plan_AnyBuffer:$result);
  let assemblyFormat = [{
    $layer $half (`row` `(` $row^ `)`)? attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Plan_AllocOp : Plan_Op<"alloc", [HasParent<"EntryOp">,
    MemoryEffects<[MemAlloc]>]> {
  let summary = "An activation buffer in the entry's workspace";
  let description = [{
    `offset` (bytes into the workspace) is set by sg-plan-memory; see
    `plan.entry` for the rules it follows.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Plan_AnyBuffer:$result);
  let assemblyFormat = "(`offset` `(` $offset^ `)`)? attr-dict `:` qualified(type($result))";
}

def Plan_CallOp : Plan_Op<"call", [HasParent<"EntryOp">, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<Plan_StepOpInterface, ["isRowwise"]>]> {
  let summary = "One step: a compiled function on buffers";
  let description = [{
    Calls `callee` with `ins` (buffers and the i64 position) and writes its
    results into `outs`, one buffer per result. `layer` is the decoder layer
    the step belongs to, for diagnostics and profiles. `rowwise` says that
    each output row (along the token dimension) depends only on the same
    row of the inputs, so a target may run the step on the last row alone
    when only the last position's logits are asked for. A GPU kernel is
    launched by `plan.launch` instead.

    Constraints:
    - C1: `callee` names a function, not a GPU kernel.
    - C2: while the callee is an sg function on tensors, it takes one
      argument per input and returns one result per output.
    - C3: ... and each buffer holds the corresponding tensor type.
    - C4: an output is an alloc or a KV cache, never a weight or the tokens.
    - C5: a KV cache that is an output is also an input (updated in place).
    - C6: a `rowwise` step takes neither the position nor a KV cache, and
      every buffer it writes has the token dimension first.
  }];
  let arguments = (ins SymbolRefAttr:$callee, Variadic<AnyType>:$ins,
                       Variadic<Plan_AnyBuffer>:$outs,
                       OptionalAttr<I64Attr>:$layer, UnitAttr:$rowwise);
  let assemblyFormat = [{
    $callee `(` $ins `)` `->` `(` $outs `)` attr-dict `:`
    `(` type($ins) `)` `->` `(` type($outs) `)`
  }];
  let hasVerifier = 1;
}

def Plan_LaunchOp : Plan_Op<"launch", [HasParent<"EntryOp">,
    AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    Plan_StepOpInterface]> {
  let summary = "One step: a GPU kernel launch on buffers";
  let description = [{
    Launches `callee` (`@module::@kernel`, a `gpu.func` of a `gpu.module`, or
    a kernel of the `gpu.binary` compiled from it) on `grid` x `block`
    threads with `dynamic_shared` bytes of dynamic shared memory. The kernel
    takes the step's operands: the ins, then the outs not among the ins, the
    position as the address of the step state. `token_grid_dim` is the grid
    dimension that has one block per token, sized for the most tokens a call
    takes (a target shrinks it to the call's tokens). `layer` is the decoder
    layer the step belongs to.

    Constraints:
    - C1: `callee` names a kernel of a `gpu.module` or a `gpu.binary`.
    - C2: `grid` and `block` have three positive sizes each;
      `dynamic_shared` is not negative.
    - C3: `token_grid_dim` is 0 (x) or 1 (y).
    - C4: an output is an alloc or a KV cache, never a weight or the tokens.
    - C5: a KV cache that is an output is also an input (updated in place).
  }];
  let arguments = (ins SymbolRefAttr:$callee, Variadic<AnyType>:$ins,
                       Variadic<Plan_AnyBuffer>:$outs,
                       OptionalAttr<I64Attr>:$layer,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       DefaultValuedAttr<I64Attr, "0">:$dynamic_shared,
                       OptionalAttr<I64Attr>:$token_grid_dim);
  let assemblyFormat = [{
    $callee `(` $ins `)` `->` `(` $outs `)` `grid` $grid `block` $block
    attr-dict `:` `(` type($ins) `)` `->` `(` type($outs) `)`
  }];
  let hasVerifier = 1;
}

def Plan_ReturnOp : Plan_Op<"return", [HasParent<"EntryOp">, Terminator]> {
  let summary = "Ends an entry point; names the buffer holding the logits";
  let description = [{
    Optionally also the buffer that holds the argmax of the last logits row
    (a CUDA decode's LM head computes it, so a greedy decode copies back one
    token instead of the row).

    Constraints:
    - C1: the logits buffer is an alloc of rank 2 ([tokens, vocab]).
    - C2: the argmax buffer, if any, is an alloc of one i32 (`[1]`).
  }];
  let arguments = (ins Plan_AnyBuffer:$logits,
                       Optional<Plan_AnyBuffer>:$argmax);
  let assemblyFormat = [{
    $logits (`argmax` $argmax^)? attr-dict `:` qualified(type($logits))
    (`,` qualified(type($argmax))^)?
  }];
  let builders = [OpBuilder<(ins "Value":$logits), [{
    build($_builder, $_state, logits, Value());
  }]>];
  let hasVerifier = 1;
}

#endif // SGC_DIALECTS_PLAN_IR_PLANOPS_TD
