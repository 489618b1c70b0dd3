//===- BuildIR.h - helpers shared by the IR builders ------------*- C++ -*-===//
//
// Part of sgc. The decoder (`@forward`, BuildIR.cpp) and the vision tower
// (`@encode_image`, BuildVisionIR.cpp) bind weights and tag their blocks
// the same way.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_BUILDIR_H
#define SGC_COMPILER_IMPORT_BUILDIR_H

#include "compiler/Import/ComputeDtype.h"
#include "compiler/Import/GraphSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::sgc::import {

/// The activation element type of `dtype`.
inline Type computeType(OpBuilder &b, ComputeDtype dtype) {
  return dtype == ComputeDtype::F32 ? Type(b.getF32Type())
                                    : Type(b.getBF16Type());
}

/// An `sg.weight` of checkpoint tensor `name` (bf16, or f16 for a matrix of
/// an object encoded F16), located at `at` under
/// the tensor's name, with its graph object and the family's other
/// spellings of the name.
Value buildWeight(OpBuilder &b, const GraphSpec &graph, Location at,
                  const std::string &name, ArrayRef<int64_t> shape);

/// Tags every op after `before` in `block` with the block it belongs to:
/// `sg.block = "embed" | "layer" | "head"`, and `sg.layer = l` on layers.
/// sg-outline-layers groups ops by these tags. Weights stay untagged: one
/// tensor may serve two blocks (the tied embedding) and is bound once.
void tagOps(Block *block, Operation *before, StringRef blockName,
            std::optional<unsigned> layer);

/// `@encode_image(pixels [N, P] f32, positions [N, 2] i32) -> [T, text
/// hidden]`: the vision tower and its adapter, variant "encode_image".
func::FuncOp buildEncodeImage(OpBuilder &b, ModuleOp module,
                              const GraphSpec &graph, const VisionSpec &tower,
                              ComputeDtype dtype);

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_BUILDIR_H
