//===- RowAccess.h - rows of a memref as vectors or scalars -----*- C++ -*-===//
//
// Part of sgc. Loads and stores of `lanes` consecutive elements of a memref
// row (a vector, or a scalar for one lane) and a memref's dimensions, as
// both lowerings' kernels read and write their buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_COMMON_ROWACCESS_H
#define SGC_COMPILER_CONVERSION_COMMON_ROWACCESS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

namespace mlir::sgc::lowering {

/// Dimension `dim` of a memref as an index value.
Value dimOf(ImplicitLocOpBuilder &b, Value memref, int64_t dim);

/// buf[idx..., col .. col + lanes): a vector load, or a scalar one for 1.
Value emitRowLoad(ImplicitLocOpBuilder &b, Value buf, ValueRange idx, Value col,
                  int64_t lanes);

/// Stores `v` (vector or scalar) at buf[idx..., col].
void emitRowStore(ImplicitLocOpBuilder &b, Value v, Value buf, ValueRange idx,
                  Value col);

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_COMMON_ROWACCESS_H
