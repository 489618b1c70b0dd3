//===- VerifyHelpers.h - shared checks of the sg op verifiers ---*- C++ -*-===//
//
// Part of sgc. The shape and attribute checks SGOps.cpp and SGFusedOps.cpp
// share.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_VERIFYHELPERS_H
#define SGC_DIALECTS_SG_IR_VERIFYHELPERS_H

#include "dialects/Common/ShapeString.h"
#include "dialects/SG/IR/SGOps.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace mlir::sgc::sg {

/// Two dimensions conflict only when both are known and differ.
inline bool dimsConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

inline bool shapesConflict(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return true;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (dimsConflict(x, y))
      return true;
  return false;
}

inline RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

inline bool isPositiveFinite(double x) { return std::isfinite(x) && x > 0.0; }

/// Prints a double as a user wrote it (`0.25`, `1e+06`), not `2.5e-01`.
inline std::string num(double x) {
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%g", x);
  return buffer;
}

/// A block-encoded weight (`!sg.quant`) is a static `[rows, K]` matrix
/// whose K is a whole number of blocks; other weights pass.
inline LogicalResult verifyBlockWeight(Operation *op, RankedTensorType w) {
  auto quant = dyn_cast<QuantType>(w.getElementType());
  if (!quant)
    return success();
  if (w.getRank() != 2 || !w.hasStaticShape())
    return op->emitOpError("requires a block-encoded weight to be a static "
                           "[rows, K] matrix, got ")
           << shapeStr(w.getShape());
  if (w.getDimSize(1) % quant.getBlockElements() != 0)
    return op->emitOpError("requires the rows of a ")
           << quant.getEncoding() << " weight to be whole blocks of "
           << quant.getBlockElements() << ", got K = " << w.getDimSize(1);
  return success();
}

} // namespace mlir::sgc::sg

#endif // SGC_DIALECTS_SG_IR_VERIFYHELPERS_H
