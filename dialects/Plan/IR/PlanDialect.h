//===- PlanDialect.h - plan dialect -----------------------------*- C++ -*-===//
//
// Part of sgc. The executable-plan dialect (PlanBase.td), its buffer type and
// enums.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_PLAN_IR_PLANDIALECT_H
#define SGC_DIALECTS_PLAN_IR_PLANDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
// For the helpers of the discardable attributes.
#include "mlir/IR/Operation.h"

#include "dialects/Plan/IR/PlanOpsDialect.h.inc"
#include "dialects/Plan/IR/PlanEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Plan/IR/PlanOpsTypes.h.inc"

#endif // SGC_DIALECTS_PLAN_IR_PLANDIALECT_H
