//===- SGInterfaces.td - sg op interfaces ------------------*- tablegen -*-===//
//
// Part of sgc. What the lowerings ask of an op family, answered once by the
// ops themselves: the CPU and CUDA lowerings and kernel selection read a
// projection or an attention through these instead of matching each op.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGINTERFACES_TD
#define SGC_DIALECTS_SG_IR_SGINTERFACES_TD

include "mlir/IR/OpBase.td"

def SG_ProjectionOpInterface : OpInterface<"ProjectionOpInterface"> {
  let cppNamespace = "::mlir::sgc::sg";
  let description = [{
    A projection of [tokens, in] rows by one or more [out, in] weights:
    sg.linear, sg.norm_linear (the RMSNorm prologue, several weights whose
    rows are concatenated, the LM head's softcap epilogue) and sg.gated_mlp
    (gate and up over the same rows, the GELU-tanh product epilogue).
  }];
  let methods = [
    InterfaceMethod<
      "The input, fused RMSNorm, weights, bias and epilogue.",
      "::mlir::sgc::sg::ProjectionParts", "getProjection">
  ];
}

def SG_AttentionOpInterface : OpInterface<"AttentionOpInterface"> {
  let cppNamespace = "::mlir::sgc::sg";
  let description = [{
    Causal attention of a chunk's queries over a KV cache as it was before
    the chunk, then the chunk's own keys: sg.sliding_attn (a ring of
    `window` slots) and sg.full_attn (window 0, a slot per position).
  }];
  let methods = [
    InterfaceMethod<
      "The queries, keys, values, caches, position, window, scale and "
      "image-block ids.",
      "::mlir::sgc::sg::AttentionParts", "getAttention">
  ];
}

#endif // SGC_DIALECTS_SG_IR_SGINTERFACES_TD
