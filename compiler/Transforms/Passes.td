//===- Passes.td - sg graph-level passes -------------------*- tablegen -*-===//
//
// Part of sgc. Every pass is listed here with its summary, description and
// options; each lives in its own .cpp file named after the def minus `Pass`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_PASSES_TD
#define SGC_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyGraphPass : Pass<"sg-verify-graph", "mlir::ModuleOp"> {
  let summary = "Check module-level invariants of an imported sg graph";
  let description = [{
    Checks what no single op verifier can see: every checkpoint tensor name
    used by `sg.weight` ops is bound with one type throughout the module,
    since the runtime binds each name once.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def PlanKVCachePass : Pass<"sg-plan-kv-cache", "mlir::ModuleOp"> {
  let summary = "Plan the KV cache of every function with attention";
  let description = [{
    Computes the KV cache plan (compiler/Transforms/KVCachePlan.h) of every
    function that holds attention ops and records it on the function as
    `sg.kv_plan`: one dictionary per attention layer, in op order, with the
    kind (`ring` for sliding layers: exactly `window` slots, slot = position
    mod window; `full`: slot = position), slots, kv heads, head widths,
    `v_from_k` and bytes per token. The CPU and CUDA back ends size the
    caches from it, and `sgc explain` prints the same plan. A remark per
    function gives the planned bytes next to the naive (every layer at full
    context) bytes.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def SpecializePass : Pass<"sg-specialize", "mlir::ModuleOp"> {
  let summary = "Clone @forward into a decode and a prefill variant";
  let description = [{
    `@forward` takes a dynamic number of tokens. This pass clones it into
    `@decode` (exactly one token: every activation's token dimension becomes
    1, so linear layers are GEMV-shaped) and `@prefill` (a chunk of up to
    `max-prefill-chunk` tokens, dynamic), tags each with `sg.variant`, and
    erases `@forward`. Later passes specialize each variant on its own.
  }];
  let options = [
    Option<"maxPrefillChunk", "max-prefill-chunk", "int64_t", "512",
           "Largest number of tokens one prefill call takes">
  ];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def OutlineLayersPass : Pass<"sg-outline-layers", "mlir::ModuleOp"> {
  let summary = "One function per layer signature, called per layer";
  let description = [{
    Groups the ops of every variant function (`sg.variant`) by the block the
    importer tagged them with (`sg.block` = embed, layer with `sg.layer`,
    head) and moves each group into its own function, called with that
    layer's activations, caches and weights (weights become arguments, so
    layers that differ only in their weights share one body). Layers whose
    bodies are structurally equal (same ops, attributes and types) share one
    function, named `@<variant>_layer<k>`; the embed and head groups become
    `@<variant>_embed` and `@<variant>_head`. What remains of the variant is
    its plan: `sg.weight` ops, calls and the return. The full seeds compile
    two layer bodies per variant, not 48 or 60.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect",
                           "mlir::func::FuncDialect"];
}

def OutlineRowsPass : Pass<"sg-outline-rows", "mlir::ModuleOp"> {
  let summary = "One function for a batched decode step's per-row ops";
  let description = [{
    A batched decode step's layer body runs its attention part once per row
    (sg-specialize: from each `sg.take_row` to the `sg.stack_rows`): the
    rows' ops differ only in their operands. This pass moves row 0's ops into `@<body>_row` and
    replaces every row's ops by a call of it, so the code of the attention
    part is compiled once per layer kind, whatever the batch sizes.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect",
                           "mlir::func::FuncDialect"];
}

def ExtractPlanPass : Pass<"sg-extract-plan", "mlir::ModuleOp"> {
  let summary = "Turn the outlined variant functions into plan IR";
  let description = [{
    After sg-outline-layers a variant function (`@decode`, `@prefill`) only
    binds weights and calls bodies. This pass rewrites it as a `plan.entry`
    (dialects/Plan/IR) and erases it, so that only bodies and kernels remain
    to be lowered:

    - one `plan.tensor` per checkpoint tensor, named by its checkpoint name,
      in the order the runtime's weight table uses (first use in `@decode`),
      with the dummy fill its use implies (norm weights, layer scalars);
    - one `plan.kv_layer` per layer from sg-plan-kv-cache's plan, and the
      longest planned context as `plan.context_length` on the module;
    - per variant a `plan.entry` whose block names each weight
      (`plan.weight`), each cache (`plan.kv_cache`), a `plan.alloc` per
      activation passed between calls, one `plan.call` per call, and returns
      the logits buffer.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect",
                           "mlir::sgc::plan::PlanDialect"];
}

def PlanMemoryPass : Pass<"sg-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place the plan's activations in one workspace";
  let description = [{
    Every `plan.alloc` of an entry (sized for the entry's `max_tokens`) gets
    a byte offset in one workspace: each lives from the step that writes it
    to the last step that reads it (the logits to the end), and buffers whose
    lives do not overlap share bytes (first fit, 64-byte aligned). Records
    the size as the entry's `workspace`; the runtime allocates the largest
    once per session, so a call allocates nothing for them.
  }];
  let dependentDialects = ["mlir::sgc::plan::PlanDialect"];
}

def FuseNormMatmulPass : Pass<"sg-fuse-norm-matmul"> {
  let summary = "Fuse an RMSNorm into the linears that read it";
  let description = [{
    An `sg.rms_norm` whose every user is an `sg.linear` reading it as input
    becomes one `sg.norm_linear` with all those weights (q/k/v after
    input_layernorm; gate/up after pre_feedforward_layernorm; the final
    norm into the LM head). The normalized activations are then never
    written out, and the projections share one kernel. Not fused: a norm
    with any other user (the result is needed as a tensor anyway), a norm
    over a rank other than 2 (per-head q/k norms).
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def FuseQKNormRopePass : Pass<"sg-fuse-qknorm-rope"> {
  let summary = "Fuse per-head q/k norms, RoPE, the V norm and the cache writes";
  let description = [{
    A per-head `sg.rms_norm` (with a weight) whose only user is an
    `sg.rope` or `sg.partial_rope` becomes one `sg.norm_rope`; when the
    rotated keys are written to a cache by an `sg.kv_write` at the same
    position, the write joins it. Gemma 4's weightless V norm and its
    `sg.kv_write` become one `sg.norm_rope` without RoPE (on full layers it
    reads the raw k projection, as the unfused IR does). Not fused: a norm
    with other users, a write at another position than the RoPE's, a value
    written twice.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def FuseGatedMLPPass : Pass<"sg-fuse-gated-mlp"> {
  let summary = "Fuse gate and up projections, GELU-tanh and the product";
  let description = [{
    `sg.mul(sg.gelu_tanh(g), u)` where `g` and `u` are the two results of one
    `sg.norm_linear` (already norm-fused, nothing else reading them) becomes
    one `sg.gated_mlp`: one kernel computes both rows, the activation and
    the product, so the gate and up activations are never written out.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def FuseSoftcapHeadPass : Pass<"sg-fuse-softcap-head"> {
  let summary = "Fuse the final logit softcap into the LM head's epilogue";
  let description = [{
    An `sg.softcap` whose input is the only use of a single-projection
    `sg.norm_linear` (or `sg.linear`) becomes the `softcap` attribute of that
    projection: the logits are capped as they are computed, in the same three
    rounded steps.
  }];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

def FusePass : Pass<"sg-fuse"> {
  let summary = "All four fusions as one pattern set";
  let description = [{
    The patterns of sg-fuse-norm-matmul, sg-fuse-qknorm-rope,
    sg-fuse-gated-mlp and sg-fuse-softcap-head applied together until none
    applies: the same IR as the four passes in that order, whatever order
    the patterns fire in. (The pipeline runs the four passes, so that
    `sgc explain` can say what each fused.)
  }];
  let options = [
    Option<"topDown", "top-down", "bool", /*default=*/"false",
           "Visit ops from the first (the driver's default is the last): "
           "the result must be the same">,
  ];
  let dependentDialects = ["mlir::sgc::sg::SGDialect"];
}

#endif // SGC_COMPILER_TRANSFORMS_PASSES_TD
