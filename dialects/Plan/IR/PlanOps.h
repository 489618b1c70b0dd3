//===- PlanOps.h - plan dialect operations ----------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_PLAN_IR_PLANOPS_H
#define SGC_DIALECTS_PLAN_IR_PLANOPS_H

#include "dialects/Plan/IR/PlanDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Plan/IR/PlanInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Plan/IR/PlanOps.h.inc"

#endif // SGC_DIALECTS_PLAN_IR_PLANOPS_H
