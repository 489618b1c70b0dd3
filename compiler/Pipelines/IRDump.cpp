//===- IRDump.cpp - write the IR after every pass -------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/IRDump.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::sgc;

namespace fs = llvm::sys::fs;

std::string mlir::sgc::checkOutputPath(StringRef path) {
  if (path == "-")
    return "";
  auto cannot = [&](const Twine &why) {
    return ("cannot write '" + path + "': " + why).str();
  };
  fs::file_status st;
  std::error_code ec = fs::status(path, st);
  if (!ec) {
    if (fs::is_directory(st))
      return cannot(std::make_error_code(std::errc::is_a_directory).message());
    if (std::error_code wec = fs::access(path, fs::AccessMode::Write))
      return cannot(wec.message());
    // /dev/null and the like are written in place, not replaced.
    if (!fs::is_regular_file(st))
      return "";
  } else if (ec != std::errc::no_such_file_or_directory) {
    return cannot(ec.message());
  }
  // The file is written next to `path` and renamed over it: its directory
  // must take new files.
  StringRef dir = llvm::sys::path::parent_path(path);
  if (dir.empty())
    dir = ".";
  if (std::error_code dec = fs::status(dir, st))
    return cannot(dec == std::errc::no_such_file_or_directory
                      ? "no such directory '" + dir + "'"
                      : "cannot reach the directory '" + dir + "'");
  if (!fs::is_directory(st))
    return cannot("not a directory: '" + dir + "'");
  if (fs::access(dir, fs::AccessMode::Write))
    return cannot("no permission to create files in '" + dir + "'");
  return "";
}

std::string mlir::sgc::writeOutputFile(
    StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  fs::file_status st;
  if (path != "-" && !fs::status(path, st) && !fs::is_regular_file(st) &&
      !fs::is_directory(st)) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return ("cannot write '" + path + "': " + ec.message()).str();
    write(os);
    return "";
  }
  // A temporary "PATH.temp-stream-XXXXXX", renamed over PATH when complete.
  llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    write(os);
    return llvm::Error::success();
  });
  if (!error)
    return "";
  std::string why;
  llvm::handleAllErrors(
      std::move(error),
      [&](const llvm::FileError &e) { why = e.messageWithoutFileInfo(); },
      [&](const llvm::ErrorInfoBase &e) { why = e.message(); });
  return ("cannot write '" + path + "': " + why).str();
}

std::string mlir::sgc::prepareDumpDir(StringRef dir) {
  if (std::error_code ec = fs::create_directories(dir))
    return ("cannot create '" + dir + "': " + ec.message()).str();
  if (fs::access(dir, fs::AccessMode::Write))
    return ("cannot write into '" + dir + "': no permission").str();
  return "";
}

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
  error = prepareDumpDir(dir);
  if (!error.empty())
    return false;
  char number[16];
  snprintf(number, sizeof(number), "%02u", nextIndex++);
  std::string fileName = (number + ("-" + name + ".mlir")).str();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, fileName);
  error = writeOutputFile(path, [&](llvm::raw_ostream &os) {
    topLevel(op)->print(os);
    os << "\n";
  });
  return error.empty();
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
