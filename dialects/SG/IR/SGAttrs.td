//===- SGAttrs.td - sg dialect attributes ------------------*- tablegen -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGATTRS_TD
#define SGC_DIALECTS_SG_IR_SGATTRS_TD

include "dialects/SG/IR/SGBase.td"
include "mlir/IR/AttrTypeBase.td"

def SG_KernelAttr : AttrDef<SG_Dialect, "Kernel"> {
  let mnemonic = "kernel";
  let summary = "The kernel family chosen for an op, and its choices";
  let description = [{
    What sg-select-kernels decided for one op of a body, and what the
    target's lowering builds: the family (`gemv_rows`, `gemm_mma`,
    `attn_decode_splitk`, ...) and the options that are the family's to
    take (`lm_head`: the projection writes the entry's logits; `prologue =
    "chain"`: the row chain before it runs in its prologue). An op whose
    work another op's launch does (a row chain in a projection's prologue,
    a chain carried into the next step) names that in `family`: `prologue`
    or `carried`.

    ```mlir
    %y = sg.norm_linear ... {sg.selected_kernel = #sg.kernel<"gemv_rows", {lm_head}>}
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$family,
                        OptionalParameter<"::mlir::DictionaryAttr">:$options);
  let assemblyFormat = "`<` $family (`,` $options^)? `>`";
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$family,
                     CArg<"::mlir::DictionaryAttr", "{}">:$options), [{
      return $_get($_ctxt, ::mlir::StringAttr::get($_ctxt, family), options);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether `options` holds `name`.
    bool has(::llvm::StringRef name) const {
      return getOptions() && getOptions().contains(name);
    }
  }];
}

#endif // SGC_DIALECTS_SG_IR_SGATTRS_TD
