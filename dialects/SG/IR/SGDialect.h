//===- SGDialect.h - sg dialect ---------------------------------*- C++ -*-===//
//
// Part of sgc. The dialect class of the model-level `sg` dialect, with the
// helpers of its discardable attributes (SGBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGDIALECT_H
#define SGC_DIALECTS_SG_IR_SGDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "dialects/SG/IR/SGOpsDialect.h.inc"

#endif // SGC_DIALECTS_SG_IR_SGDIALECT_H
