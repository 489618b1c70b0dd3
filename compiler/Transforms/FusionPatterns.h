//===- FusionPatterns.h - the four fusions as rewrite patterns --*- C++ -*-===//
//
// Part of sgc. Each fusion is a rewrite pattern; its pass applies it alone
// (so `sgc explain` reports what each did), and `sg-fuse` applies the four
// as one set. The set's result does not depend on the order its patterns
// fire in: the gated MLP matches only what the norm fusion made and waits
// for it, and the softcap leaves a head whose norm the norm fusion will
// take to it (test/Transforms/fuse-any-order.mlir).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_FUSIONPATTERNS_H
#define SGC_COMPILER_TRANSFORMS_FUSIONPATTERNS_H

#include "dialects/SG/IR/SGOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <optional>

namespace mlir::sgc {

void populateFuseNormMatmulPatterns(RewritePatternSet &patterns);
void populateFuseQKNormRopePatterns(RewritePatternSet &patterns);
void populateFuseGatedMLPPatterns(RewritePatternSet &patterns);
void populateFuseSoftcapHeadPatterns(RewritePatternSet &patterns);
/// All four.
void populateFusionPatterns(RewritePatternSet &patterns);

/// The linears `norm` fuses into, in block order, when the norm fusion
/// applies to it; none otherwise.
std::optional<SmallVector<sg::LinearOp>> fusableLinears(sg::RMSNormOp norm);

/// Applies `patterns` to `root` until none applies, with no folding and no
/// region simplification: the IR changes only where a fusion fires. The
/// driver visits ops from the last unless `topDown`.
LogicalResult applyFusionPatterns(Operation *root,
                                  const FrozenRewritePatternSet &patterns,
                                  bool topDown = false);

} // namespace mlir::sgc

#endif // SGC_COMPILER_TRANSFORMS_FUSIONPATTERNS_H
