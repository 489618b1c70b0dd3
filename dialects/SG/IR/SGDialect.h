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

// The attributes first: the dialect's discardable attribute helpers name them.
#define GET_ATTRDEF_CLASSES
#include "dialects/SG/IR/SGAttrs.h.inc"

#include "dialects/SG/IR/SGOpsDialect.h.inc"

#endif // SGC_DIALECTS_SG_IR_SGDIALECT_H
