//===- RowAccess.cpp - rows of a memref as vectors or scalars -------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/RowAccess.h"
#include "compiler/Conversion/Common/ReferenceMath.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

Value lowering::dimOf(ImplicitLocOpBuilder &b, Value memref, int64_t dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return constIndex(b, type.getDimSize(dim));
  return memref::DimOp::create(b, memref, dim);
}

Value lowering::emitRowLoad(ImplicitLocOpBuilder &b, Value buf, ValueRange idx,
                            Value col, int64_t lanes) {
  SmallVector<Value> indices(idx);
  indices.push_back(col);
  if (lanes == 1)
    return memref::LoadOp::create(b, buf, indices);
  Type elem = cast<MemRefType>(buf.getType()).getElementType();
  return vector::LoadOp::create(b, VectorType::get({lanes}, elem), buf,
                                indices);
}

void lowering::emitRowStore(ImplicitLocOpBuilder &b, Value v, Value buf,
                            ValueRange idx, Value col) {
  SmallVector<Value> indices(idx);
  indices.push_back(col);
  if (isa<VectorType>(v.getType()))
    vector::StoreOp::create(b, v, buf, indices);
  else
    memref::StoreOp::create(b, v, buf, indices);
}
