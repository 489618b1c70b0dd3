//===- sgc-opt.cpp - mlir-opt with the sg dialect and sgc passes ----------===//
//
// Part of sgc. Replays any phase (`--sgc-<phase>`) or pass on an .mlir file.
// `sgc-opt --list-kernel-families=cpu|cuda` prints a target's kernel
// families, one per line (what the backend-op test must cover).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::StringRef list = "--list-kernel-families=";
  if (argc == 2 && llvm::StringRef(argv[1]).starts_with(list)) {
    llvm::StringRef target = llvm::StringRef(argv[1]).drop_front(list.size());
    llvm::SmallVector<llvm::StringRef> names =
        mlir::sgc::kernelFamilyNames(target);
    if (names.empty()) {
      llvm::errs() << "sgc-opt: no target '" << target << "' (cpu or cuda)\n";
      return 1;
    }
    for (llvm::StringRef name : names)
      llvm::outs() << name << "\n";
    return 0;
  }
  mlir::DialectRegistry registry;
  mlir::sgc::registerSgcDialects(registry);
  mlir::sgc::registerSgcPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "sgc optimizer driver\n", registry));
}
