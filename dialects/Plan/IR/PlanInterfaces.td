//===- PlanInterfaces.td - plan op interfaces --------------*- tablegen -*-===//
//
// Part of sgc. A step of an entry point is a function call (`plan.call`) or a
// kernel launch (`plan.launch`); what the plan passes and the ABI serializer
// ask of either goes through this interface.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_PLAN_IR_PLANINTERFACES_TD
#define SGC_DIALECTS_PLAN_IR_PLANINTERFACES_TD

include "mlir/IR/OpBase.td"

def Plan_StepOpInterface : OpInterface<"StepOpInterface"> {
  let cppNamespace = "::mlir::sgc::plan";
  let description = [{
    One step of a `plan.entry`: runs `callee` on `ins` and writes `outs`
    (a KV cache among the outs is also among the ins: updated in place).
    Steps run in the order of the entry's block.
  }];
  let methods = [
    InterfaceMethod<"The function or kernel the step runs.",
      "::mlir::SymbolRefAttr", "getCalleeAttr">,
    InterfaceMethod<"The buffers (and the i64 position) the step reads.",
      "::mlir::Operation::operand_range", "getIns">,
    InterfaceMethod<"The buffers the step writes.",
      "::mlir::Operation::operand_range", "getOuts">,
    InterfaceMethod<"The decoder layer the step belongs to, if any.",
      "::std::optional<uint64_t>", "getLayer">,
    InterfaceMethod<[{Whether each output row depends only on the same input
      row (so the step may run on the last row alone).}],
      "bool", "isRowwise", (ins), [{}], [{ return false; }]>
  ];
}

#endif // SGC_DIALECTS_PLAN_IR_PLANINTERFACES_TD
