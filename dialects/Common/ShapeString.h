//===- ShapeString.h - shapes as verifier messages print them ---*- C++ -*-===//
//
// Part of sgc. Shared by the sg and plan dialects' verifiers, so both print
// a shape the same way in their diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_COMMON_SHAPESTRING_H
#define SGC_DIALECTS_COMMON_SHAPESTRING_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <string>

namespace mlir::sgc {

/// [4, ?, 16]: `?` for a dynamic dimension.
inline std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

} // namespace mlir::sgc

#endif // SGC_DIALECTS_COMMON_SHAPESTRING_H
