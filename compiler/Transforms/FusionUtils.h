//===- FusionUtils.h - what the fusion passes share -------------*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H
#define SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::sgc {

/// Copies the importer's block tags (sg.block, sg.layer) of `from` onto `to`,
/// so sg-outline-layers still places a fused op in its layer.
inline void copyBlockTags(Operation *from, Operation *to) {
  for (StringRef name : {"sg.block", "sg.layer"})
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

/// Runs `fuse` over `root` and reports what it changed: one remark per
/// function and layer kind ("sliding", "full", "head", ...) whose op count
/// changed, as `fusion: <pass> on @f, <kind> layers (n): a -> b sg ops per
/// layer`. `sgc explain` and `--remarks` print these.
void runAndReportFusion(Operation *root, StringRef pass,
                        llvm::function_ref<void()> fuse);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TRANSFORMS_FUSIONUTILS_H
