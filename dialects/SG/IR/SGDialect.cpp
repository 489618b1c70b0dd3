//===- SGDialect.cpp - sg dialect registration ----------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "dialects/SG/IR/SGDialect.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc::sg;

#include "dialects/SG/IR/SGOpsDialect.cpp.inc"

void SGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/SG/IR/SGOps.cpp.inc"
      >();
}
