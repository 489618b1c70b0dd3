//===- SGDialect.h - sg dialect ---------------------------------*- C++ -*-===//
//
// Part of sgc. The dialect class of the model-level `sg` dialect, with the
// helpers of its discardable attributes (SGBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGDIALECT_H
#define SGC_DIALECTS_SG_IR_SGDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

// The attributes first: the dialect's discardable attribute helpers name them.
#define GET_ATTRDEF_CLASSES
#include "dialects/SG/IR/SGAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/SG/IR/SGTypes.h.inc"

#include "dialects/SG/IR/SGOpsDialect.h.inc"

namespace mlir::sgc::sg {
/// The shape and element type of a tensor's buffer: a block-encoded
/// `[N, K]` weight (`!sg.quant`) is its bytes, `[N, K / B · block bytes]`
/// of i8; any other tensor keeps its shape and element type.
std::pair<SmallVector<int64_t>, Type> storageOf(RankedTensorType type);
/// The bytes of that buffer (static shape).
int64_t storageBytes(RankedTensorType type);
} // namespace mlir::sgc::sg

#endif // SGC_DIALECTS_SG_IR_SGDIALECT_H
