//===- PlanDialect.cpp - plan dialect, buffer type ------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "dialects/Plan/IR/PlanDialect.h"
#include "dialects/Plan/IR/PlanOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sgc::plan;

#include "dialects/Plan/IR/PlanOpsDialect.cpp.inc"
#include "dialects/Plan/IR/PlanEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Plan/IR/PlanOpsTypes.cpp.inc"

void PlanDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Plan/IR/PlanOps.cpp.inc"
      >();
  registerTypes();
}

void PlanDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Plan/IR/PlanOpsTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// BufferType
//===----------------------------------------------------------------------===//

Type BufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return BufferType::get(parser.getContext(), shape, elementType);
}

void BufferType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape()) {
    if (ShapedType::isDynamic(d))
      printer << "?";
    else
      printer << d;
    printer << "x";
  }
  printer << getElementType() << ">";
}

int64_t BufferType::getBytes(int64_t tokens) const {
  int64_t bytes = (getElementType().getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t d : getShape())
    bytes *= ShapedType::isDynamic(d) ? tokens : d;
  return bytes;
}

bool BufferType::holds(RankedTensorType t) const {
  if (t.getRank() != static_cast<int64_t>(getShape().size()))
    return false;
  ArrayRef<int64_t> tensorShape = t.getShape(), bufferShape = getShape();
  // A block-encoded tensor (`!sg.quant`) is held as its bytes: i8 rows of
  // whatever length the encoding makes, the leading dimensions the same.
  if (!t.getElementType().isIntOrFloat()) {
    if (!getElementType().isInteger(8) || t.getRank() == 0)
      return false;
    tensorShape = tensorShape.drop_back();
    bufferShape = bufferShape.drop_back();
  } else if (t.getElementType() != getElementType()) {
    return false;
  }
  for (auto [a, b] : llvm::zip_equal(tensorShape, bufferShape))
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return false;
  return true;
}
