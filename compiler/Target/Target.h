//===- Target.h - what a code generation target implements -----*- C++ -*-===//
//
// Part of sgc. Every phase up to `plan` is the same for all targets; a target
// brings its `lower` and `codegen` pipelines and the emitter that turns the
// result into a model library. `--target` picks one from the registry
// (Registry.cpp): a new target is a folder under compiler/Target/ with a
// class implementing this interface, and one line in the registry.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_TARGET_H
#define SGC_COMPILER_TARGET_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::sgc {

/// How an emit ended; the driver maps it to an exit code.
enum class EmitResult {
  Ok,
  /// The module cannot be expressed as a library (a diagnostic says why).
  BadModule,
  /// A tool the target needs (cc, ptxas) is missing or failed to run.
  ToolUnavailable,
  /// The output could not be written.
  OutputError,
};

struct EmitOptions {
  /// Where the library goes.
  std::string outputPath;
  /// When set, the generated sources (the C glue) are written here too.
  std::string dumpDir;
};

class Target {
public:
  virtual ~Target();
  /// The name `--target` takes ("cpu").
  virtual StringRef getName() const = 0;
  /// One line for `sgc compile --help`.
  virtual StringRef getDescription() const = 0;
  /// Whether the lower phase has kernels for the vision towers' ops; a
  /// target without them compiles the decoder alone (the importer keeps
  /// the tower as an opaque component, with a remark).
  virtual bool lowersVisionTower() const { return false; }
  /// Whether the target has kernels for batched decode steps (sg.take_row,
  /// sg.stack_rows and per-row caches).
  virtual bool lowersDecodeBatch() const { return false; }
  /// Plan IR + sg bodies -> the target's kernel IR.
  virtual void buildLowerPipeline(OpPassManager &pm) const = 0;
  /// Kernel IR -> what the emitter translates (e.g. the LLVM dialect). With
  /// `perFunction`, passes that see one function at a time may be nested
  /// under the functions (the context's threads then run them in parallel);
  /// without it the pipeline is flat, each pass over the whole module, as
  /// --dump-ir-after-each needs. The IR comes out the same either way.
  virtual void buildCodegenPipeline(OpPassManager &pm,
                                    bool perFunction) const = 0;
  /// Adds, after the lower phase, a pass that writes the kernels' specs to
  /// `file` as JSON; false for a target whose kernels have none (the CPU's).
  virtual bool addKernelSpecsWriter(OpPassManager &pm, StringRef file) const {
    return false;
  }
  /// Writes the model library for the codegen phase's output.
  virtual EmitResult emit(ModuleOp module,
                          const EmitOptions &options) const = 0;
};

/// Every target of this build, the default (cpu) first.
ArrayRef<const Target *> allTargets();

/// The target named `name`, or null.
const Target *lookupTarget(StringRef name);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_TARGET_H
