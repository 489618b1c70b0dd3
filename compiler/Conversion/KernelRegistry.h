//===- KernelRegistry.h - a target's kernel families, by benefit -*- C++ -*-===//
//
// Part of sgc. A kernel family is shaped like a rewrite pattern: a name, a
// benefit among the families that serve the same op, whether it applies to
// an op in a context (the target's), and how it is emitted. A target keeps
// its families in one registry (CUDA: SGToGPU/KernelFamilies.cpp; CPU:
// SGToCPU/CpuFamilies.cpp); sg-select-kernels records the chosen one on
// each op, the target's lowering emits what the record names. A new family
// is its own .cpp plus one registration line.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_KERNELREGISTRY_H
#define SGC_COMPILER_CONVERSION_KERNELREGISTRY_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::sgc {

/// `Family` has `StringRef name`, `unsigned benefit` and `applies(Operation *,
/// const Context &)` (a function pointer member or a member function).
template <typename Family, typename Context>
class KernelRegistry {
public:
  /// Keeps the families highest benefit first (registration order among
  /// equals).
  void add(const Family &family) {
    auto *at = llvm::find_if(families, [&](const Family &f) {
      return f.benefit < family.benefit;
    });
    families.insert(at, family);
  }
  /// The family of the highest benefit that applies to `op`, or null.
  const Family *select(Operation *op, const Context &ctx) const {
    for (const Family &family : families)
      if (family.applies(op, ctx))
        return &family;
    return nullptr;
  }
  const Family *lookup(StringRef name) const {
    for (const Family &family : families)
      if (family.name == name)
        return &family;
    return nullptr;
  }
  ArrayRef<Family> all() const { return families; }

private:
  SmallVector<Family> families;
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_CONVERSION_KERNELREGISTRY_H
