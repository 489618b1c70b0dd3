//===- SGDialect.cpp - sg dialect registration ----------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGDialect.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sgc::sg;

#include "dialects/SG/IR/SGOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/SG/IR/SGAttrs.cpp.inc"

void SGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/SG/IR/SGOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/SG/IR/SGAttrs.cpp.inc"
      >();
}
