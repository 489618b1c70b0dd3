//===- CPULibrary.cpp - the CPU target's emit phase -----------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPULibrary.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::sgc;

EmitResult mlir::sgc::emitCPULibrary(ModuleOp module,
                                     const EmitOptions &options) {
  std::vector<CPUVariant> variants = defaultCPUVariants();
  FailureOr<std::string> glue = emitCPUGlue(module, variants);
  if (failed(glue))
    return EmitResult::BadModule;
  FailureOr<std::vector<std::string>> compiled =
      emitCPUObjects(module, variants, options.dumpDir);
  if (failed(compiled))
    return EmitResult::BadModule;
  std::vector<LinkObject> objects;
  for (auto [variant, object] : llvm::zip_equal(variants, *compiled))
    objects.push_back({variant.prefix + "model.o", std::move(object)});
  return linkModelLibrary(module, "cpu-glue.c", *glue, objects, options);
}
