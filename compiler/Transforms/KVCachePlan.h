//===- KVCachePlan.h - the KV cache plan of a forward function --*- C++ -*-===//
//
// Part of sgc. One plan, computed from the IR, shared by the compiler (which
// emits it into the ABI), `sgc explain` and the `sg-plan-kv-cache` pass:
// sliding layers keep a ring of exactly `window` slots, full layers one slot
// per position of the context.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TRANSFORMS_KVCACHEPLAN_H
#define SGC_COMPILER_TRANSFORMS_KVCACHEPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace mlir::sgc {

/// The cache of one attention layer.
struct KVLayerPlan {
  /// Position of the layer among the attention ops of the function.
  unsigned layer = 0;
  /// A ring of `slots` = window positions (slot = position mod window);
  /// otherwise slot = position.
  bool ring = false;
  int64_t slots = 0;
  int64_t window = 0;
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  int64_t vHeadDim = 0;
  /// V was derived from the raw K projection (stored separately all the
  /// same: V is normed, K is normed and rotated).
  bool vFromK = false;
  /// The cache holds V only; keys are rebuilt from it when read.
  bool keysFromValues = false;
  int64_t elementBytes = 0;

  /// K and V bytes one position occupies.
  int64_t bytesPerToken() const {
    return kvHeads * (keysFromValues ? vHeadDim : headDim + vHeadDim) *
           elementBytes;
  }
  /// Bytes of this layer's K and V caches.
  int64_t bytes() const { return slots * bytesPerToken(); }
};

struct KVCachePlan {
  /// The longest context the caches serve (full layers' slots).
  int64_t contextLength = 0;
  std::vector<KVLayerPlan> layers;

  /// Bytes of all caches as planned.
  int64_t totalBytes() const;
  /// Bytes if every layer kept the whole context (no rings).
  int64_t naiveBytes() const;

  /// Plans the caches of `forward` from its attention ops, in op order.
  /// Fails with a diagnostic on a cache of unknown shape or element type.
  static FailureOr<KVCachePlan> compute(func::FuncOp forward);
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_TRANSFORMS_KVCACHEPLAN_H
