//===- PlanSerializer.h - plan IR -> the ABI tables -------------*- C++ -*-===//
//
// Part of sgc. Writes a planned module's `plan` IR as the constant tables of
// lib/abi/sgc/abi.h (manifest, KV plan, operands, steps, phases, the model
// table) in C. Every target's emitter uses it; the target adds only its
// variants (code and function tables).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_ABI_PLANSERIALIZER_H
#define SGC_COMPILER_TARGET_ABI_PLANSERIALIZER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::sgc {

/// One function a step calls, with the operand list the step passes.
struct PlanFunction {
  /// The callee's symbol.
  std::string name;
  /// Per operand, its ABI kind (SGC_ABI_OPERAND_*); the position is passed
  /// by value, everything else as a buffer.
  SmallVector<unsigned> operandKinds;
};

class PlanSerializer {
public:
  /// Reads the plan of `module`; fails with a diagnostic on a module that has
  /// no complete plan (entries, placed workspace, logits).
  static FailureOr<PlanSerializer> read(ModuleOp module);

  /// Distinct callees in the order of their first step: a step's `function`
  /// is an index into this list.
  ArrayRef<PlanFunction> functions() const { return functions_; }

  /// The constant tables: tensors, KV layers, operands, steps, phases.
  void writeTables(llvm::raw_ostream &os) const;

  /// The model table and `sgc_model_query`. `device` is an SGC_ABI_DEVICE_*
  /// name; `variants` the name of the variant array the target wrote;
  /// `cudaEmu` the name of its sgc_abi_cuda_emu_t, if any.
  void writeModel(llvm::raw_ostream &os, StringRef target, StringRef device,
                  StringRef variants, size_t numVariants,
                  StringRef cudaEmu = "") const;

  /// A C string literal.
  static std::string cString(StringRef s);

private:
  /// The image component record (sgc_abi_image_t).
  void writeImage(llvm::raw_ostream &os) const;
  explicit PlanSerializer(ModuleOp module) : module(module) {}
  LogicalResult readEntries();

  /// Op accessors are not const; reading the plan changes nothing.
  mutable ModuleOp module;
  SmallVector<PlanFunction> functions_;
  /// Text of the operand, step and phase initializers.
  std::string operands, steps, phases;
  /// Per phase, its argmax operand (or a rank-0 one); `anyArgmax` if any.
  std::string phaseArgmax;
  bool anyArgmax = false;
  size_t numOperands = 0, numSteps = 0, numPhases = 0;
  int64_t vocab = 0, context = 0, maxPrefillChunk = 1, workspace = 0;
  /// Soft tokens per image of the encode_image entry; 0 without one.
  int64_t imageSoftTokens = 0;
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_TARGET_ABI_PLANSERIALIZER_H
