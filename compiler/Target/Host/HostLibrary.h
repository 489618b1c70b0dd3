//===- HostLibrary.h - host objects and the model library -------*- C++ -*-===//
//
// Part of sgc. What both targets' emit phases share: the CPU variants the
// host code is compiled for (the host CPU and the x86-64-v3 baseline, each
// with its own symbol prefix), LLVM-dialect module -> one object per
// variant, and the link of the C glue and the objects into the model's
// shared library, which exports only `sgc_model_query`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_HOST_HOSTLIBRARY_H
#define SGC_COMPILER_TARGET_HOST_HOSTLIBRARY_H

#include "compiler/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sgc {

/// One compiled variant of the model's code.
struct CPUVariant {
  /// Shown to users and recorded in the ABI table ("znver5", "x86-64-v3").
  std::string name;
  /// LLVM CPU name and feature string for code generation.
  std::string cpu;
  std::string features;
  /// SGC_ABI_CPU_* bits the code needs.
  uint64_t requiredFeatures = 0;
  /// Prefix of every symbol of this variant's object.
  std::string prefix;
};

/// The host CPU (best first) and the x86-64-v3 baseline.
std::vector<CPUVariant> defaultCPUVariants();

/// Writes `contents` to `dir/name` whole or not at all (a temporary renamed
/// over it); returns the path or "" with a diagnostic at `loc`.
std::string writeFileIn(Location loc, StringRef dir, StringRef name,
                        StringRef contents);

/// Compiles the LLVM-dialect `module` into an object file for `variant`.
FailureOr<std::string> emitCPUObject(ModuleOp module,
                                     const CPUVariant &variant);

/// The same for each of `variants`, their LLVM optimization and code
/// generation on a thread each; the objects in the order of `variants`.
/// With `irDir`, each variant's LLVM IR as it goes into optimization is
/// written there too, as <prefix>model.ll.
FailureOr<std::vector<std::string>>
emitCPUObjects(ModuleOp module, ArrayRef<CPUVariant> variants,
               StringRef irDir = "");

/// An object file to link, by name and contents.
struct LinkObject {
  std::string name;
  std::string bytes;
};

/// Links the C `glue` and `objects` with the system C compiler into the
/// shared library `options.outputPath` that needs only libc and libm and
/// exports only sgc_model_query (written whole or not at all); the glue also
/// goes to `options.dumpDir`/`glueName` when a dump directory is given.
EmitResult linkModelLibrary(ModuleOp module, StringRef glueName,
                            StringRef glue, ArrayRef<LinkObject> objects,
                            const EmitOptions &options);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_HOST_HOSTLIBRARY_H
