//===- SGOps.h - sg dialect operations --------------------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGOPS_H
#define SGC_DIALECTS_SG_IR_SGOPS_H

#include "dialects/SG/IR/SGDialect.h"
#include "dialects/SG/IR/SGInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::sgc::sg {
/// The op trait SG_RowWise (SGBase.td): a marker, nothing to verify.
template <typename ConcreteType>
class RowWise : public OpTrait::TraitBase<ConcreteType, RowWise> {};
} // namespace mlir::sgc::sg

#define GET_OP_CLASSES
#include "dialects/SG/IR/SGOps.h.inc"

#endif // SGC_DIALECTS_SG_IR_SGOPS_H
