//===- IRDump.cpp - write the IR after every pass -------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/IRDump.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include <cstdio>
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sgc;

/// The outermost op: nested passes run on functions, the dump is always the
/// whole module.
static Operation *topLevel(Operation *op) {
  while (Operation *parent = op->getParentOp())
    op = parent;
  return op;
}

bool IRDumpInstrumentation::dump(StringRef name, Operation *op) {
  if (!error.empty())
    return false;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  char number[16];
  snprintf(number, sizeof(number), "%02u", nextIndex++);
  std::string fileName = (number + ("-" + name + ".mlir")).str();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, fileName);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + std::string(path) + "': " + ec.message();
    return false;
  }
  topLevel(op)->print(os);
  os << "\n";
  return true;
}

void IRDumpInstrumentation::runAfterPass(Pass *pass, Operation *op) {
  // Adaptors (no argument) only run nested pipelines; the nested passes dump
  // themselves.
  if (pass->getArgument().empty())
    return;
  dump(pass->getArgument(), op);
}

void IRDumpInstrumentation::runAfterPassFailed(Pass *pass, Operation *op) {
  if (pass->getArgument().empty())
    return;
  dump((pass->getArgument() + "-failed").str(), op);
}
