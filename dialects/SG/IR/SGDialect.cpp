//===- SGDialect.cpp - sg dialect registration ----------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGDialect.h"
#include "dialects/SG/IR/SGOps.h"
#include "lib/abi/sgc/abi.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sgc::sg;

#include "dialects/SG/IR/SGOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/SG/IR/SGAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/SG/IR/SGTypes.cpp.inc"

void SGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/SG/IR/SGOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/SG/IR/SGAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/SG/IR/SGTypes.cpp.inc"
      >();
}

namespace {
/// The block layout of `encoding` from abi.h's rows; {0, 0} when unknown.
std::pair<int64_t, int64_t> blockLayout(StringRef encoding) {
#define SGC_BLOCK_ROW(name, code, blockBytes, blockElements)                  \
  if (blockElements > 1 && encoding == #name)                                 \
    return {blockElements, blockBytes};
  SGC_ABI_DTYPES(SGC_BLOCK_ROW)
#undef SGC_BLOCK_ROW
  return {0, 0};
}
} // namespace

LogicalResult
QuantType::verify(function_ref<InFlightDiagnostic()> emitError,
                  StringRef encoding) {
  if (blockLayout(encoding).first == 0)
    return emitError() << "quant_c1: unknown block encoding '" << encoding
                       << "' (Q8_0, Q4_0, Q6_K, Q4_K, FP8_CH, INT4_G32 and INT4_G128 are "
                          "known)";
  return success();
}

int64_t QuantType::getBlockElements() const {
  return blockLayout(getEncoding()).first;
}

int64_t QuantType::getBlockBytes() const {
  return blockLayout(getEncoding()).second;
}

std::pair<SmallVector<int64_t>, Type>
mlir::sgc::sg::storageOf(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  auto quant = dyn_cast<QuantType>(type.getElementType());
  if (!quant || shape.empty())
    return {shape, type.getElementType()};
  shape.back() = quant.getRowBytes(shape.back());
  return {shape, IntegerType::get(type.getContext(), 8)};
}

int64_t mlir::sgc::sg::storageBytes(RankedTensorType type) {
  auto [shape, element] = storageOf(type);
  int64_t bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t dim : shape)
    bytes *= dim;
  return bytes;
}
