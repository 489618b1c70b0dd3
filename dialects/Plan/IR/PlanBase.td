//===- PlanBase.td - plan dialect, types and enums ---------*- tablegen -*-===//
//
// Part of sgc. The `plan` dialect: what a compiled model runs, as data that
// every target shares (ARCHITECTURE.md §2): the weights by manifest entry,
// the KV cache per layer, activation buffers at workspace offsets, and per
// entry point the steps that call a layer body or a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_PLAN_IR_PLANBASE_TD
#define SGC_DIALECTS_PLAN_IR_PLANBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Plan_Dialect : Dialect {
  let name = "plan";
  let cppNamespace = "::mlir::sgc::plan";
  let summary = "The executable plan of a compiled model";
  let description = [{
    A module that has been planned holds, next to the functions that compute
    (layer bodies, kernels):

    - one `plan.tensor` per checkpoint tensor the model binds (the manifest;
      its order is the weight table's order in the ABI),
    - one `plan.kv_layer` per decoder layer (the KV-cache plan),
    - one `plan.entry` per entry point (`decode`, `prefill`), whose single
      block names buffers (`plan.weight`, `plan.kv_cache`, `plan.alloc`) and
      runs its steps on them in order (`plan.call` of a compiled function,
      `plan.launch` of a GPU kernel), and returns the
      buffer that holds the logits.

    Buffers are `!plan.buffer<...>` values: a name for memory, not a value
    that is computed. A call writes its outputs into the buffers listed in
    `outs`; a KV cache it updates is both an input and an output (in place).
    `sg-plan-memory` gives every `plan.alloc` a byte offset in the entry's
    workspace; the verifier checks that buffers that are live at the same
    time never share bytes. One serializer writes this IR into the ABI
    tables (lib/abi/sgc/abi.h); the runtime replays them.

    Verifier checks carry the tag of the constraint they enforce
    (`entry_c2`); test/Dialect/Plan/invalid.mlir has a case per tag.
  }];
  // Declared once, read and written through the generated helpers
  // (`PlanDialect::ContextLengthAttrHelper`); one line each.
  let discardableAttrs = (ins
    // sg-extract-plan, on the module: the longest context a layer plans for.
    "::mlir::IntegerAttr":$context_length
  );
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Plan_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plan_Dialect, mnemonic, traits>;

def Plan_BufferType : TypeDef<Plan_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "A region of memory with a shape and an element type";
  let description = [{
    `!plan.buffer<?x96xbf16>`: row-major memory for a tensor of that shape.
    A `?` dimension is the call's token count (at most the entry's
    `max_tokens`).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Bytes of the buffer with every dynamic dimension set to `tokens`.
    int64_t getBytes(int64_t tokens) const;
    /// Whether it holds a tensor of type `t` (`?` matches any extent).
    bool holds(::mlir::RankedTensorType t) const;
  }];
}

def Plan_AnyBuffer : Type<CPred<"::llvm::isa<::mlir::sgc::plan::BufferType>($_self)">,
                          "plan buffer", "::mlir::sgc::plan::BufferType">;

def Plan_FillRandom : I32EnumAttrCase<"random", 0>;
def Plan_FillOnes : I32EnumAttrCase<"ones", 1>;
def Plan_FillZeros : I32EnumAttrCase<"zeros", 2>;
def Plan_Fill : I32EnumAttr<"Fill",
    "what --load-format=dummy writes into a tensor",
    [Plan_FillRandom, Plan_FillOnes, Plan_FillZeros]> {
  let cppNamespace = "::mlir::sgc::plan";
}

def Plan_KVRing : I32EnumAttrCase<"ring", 0>;
def Plan_KVFull : I32EnumAttrCase<"full", 1>;
def Plan_KVKind : I32EnumAttr<"KVKind", "how a layer's KV cache holds positions",
    [Plan_KVRing, Plan_KVFull]> {
  let cppNamespace = "::mlir::sgc::plan";
}

def Plan_CacheHalfKey : I32EnumAttrCase<"key", 0>;
def Plan_CacheHalfValue : I32EnumAttrCase<"value", 1>;
def Plan_CacheHalf : I32EnumAttr<"CacheHalf", "the K or the V buffer of a layer",
    [Plan_CacheHalfKey, Plan_CacheHalfValue]> {
  let cppNamespace = "::mlir::sgc::plan";
}

def Plan_EntryPrefill : I32EnumAttrCase<"prefill", 0>;
def Plan_EntryDecode : I32EnumAttrCase<"decode", 1>;
def Plan_EntryEncodeImage : I32EnumAttrCase<"encode_image", 2>;
def Plan_EntryDecodeBatch : I32EnumAttrCase<"decode_batch", 3>;
def Plan_EntryKind : I32EnumAttr<"EntryKind", "what an entry point computes",
    [Plan_EntryPrefill, Plan_EntryDecode, Plan_EntryEncodeImage,
     Plan_EntryDecodeBatch]> {
  let cppNamespace = "::mlir::sgc::plan";
}

#endif // SGC_DIALECTS_PLAN_IR_PLANBASE_TD
