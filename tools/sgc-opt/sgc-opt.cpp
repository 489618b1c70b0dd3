//===- sgc-opt.cpp - mlir-opt with the sg dialect and sgc passes ----------===//
//
// Part of sgc. Replays any phase (`--sgc-<phase>`) or pass on an .mlir file.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::sgc::registerSgcDialects(registry);
  mlir::sgc::registerSgcPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "sgc optimizer driver\n", registry));
}
