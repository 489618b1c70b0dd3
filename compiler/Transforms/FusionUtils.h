//===- FusionUtils.h - what the fusion passes share -------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H
#define SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H

#include "dialects/SG/IR/SGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::sgc {

/// Copies the importer's block tags (sg.block, sg.layer) of `from` onto `to`,
/// so sg-outline-layers still places a fused op in its layer.
inline void copyBlockTags(Operation *from, Operation *to) {
  for (StringRef name : {sg::SGDialect::BlockAttrHelper::getNameStr(),
                         sg::SGDialect::LayerAttrHelper::getNameStr()})
    if (Attribute attr = from->getAttr(name))
      to->setAttr(name, attr);
}

/// A location naming every op a fused op replaces.
inline Location fusedLoc(ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(ops.front()->getContext(), locs);
}

/// What one fusion pass changed in one function, for one kind of layer: the
/// data of one fusion remark.
struct FusionChange {
  /// The pass flag ("sg-fuse-norm-matmul") and the function ("decode").
  std::string pass, function;
  /// The layers' kind ("sliding", "full", "other") or a block ("embed",
  /// "head").
  std::string kind;
  /// How many layers of that kind (1 for a block).
  int64_t count = 0;
  /// sg ops per layer before and after the pass.
  int64_t opsBefore = 0, opsAfter = 0;

  bool isLayer() const { return kind != "embed" && kind != "head"; }
  /// `<pass> on @f, <kind> layers (n): a -> b sg ops per layer`.
  std::string describe() const;
};

/// Runs `fuse` over `root` and reports what it changed: one remark per
/// function and layer kind whose op count changed, `fusion: ` followed by
/// the change's describe(). Each remark carries its FusionChange (see
/// getFusionChange); `sgc explain` reads those and `--remarks` prints them.
void runAndReportFusion(Operation *root, StringRef pass,
                        llvm::function_ref<void()> fuse);

/// The change a remark of runAndReportFusion reports; none for any other
/// diagnostic.
std::optional<FusionChange> getFusionChange(Diagnostic &diag);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H
