//===- CpuFamilies.h - the CPU kernel families ------------------*- C++ -*-===//
//
// Part of sgc. The CPU target's registry (KernelRegistry.h): each family
// applies to an op and lowers it (SGToCPU's op families, one .cpp each).
// sg-select-kernels=target=cpu records the chosen one on each op;
// convert-sg-to-cpu lowers what the record names. A new family (a weight
// encoding's projection) is its own .cpp plus one line in CpuFamilies.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_CPUFAMILIES_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_CPUFAMILIES_H

#include "compiler/Conversion/KernelRegistry.h"
#include "compiler/Conversion/SGToCPU/Lowering.h"

namespace mlir::sgc::lowering {

/// What CPU selection knows of an op's place: nothing yet (the variants'
/// instruction sets are chosen at run time, inside the families' kernels).
struct CpuContext {};

/// A family: the op kinds it lowers, each by its own lowering (looked up by
/// the op's TypeID, as a pattern by its root).
struct CpuKernelFamily {
  StringRef name;
  unsigned benefit;
  ArrayRef<OpLowering> ops;

  /// The lowering of `op`'s kind, or null.
  const OpLowering *find(Operation *op) const;
  bool applies(Operation *op, const CpuContext &) const { return find(op); }
  LogicalResult lower(Operation *op, FunctionLowering &state) const;
};

using CpuKernelFamilySet = KernelRegistry<CpuKernelFamily, CpuContext>;

/// The CPU families.
const CpuKernelFamilySet &cpuKernelFamilies();

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_CPUFAMILIES_H
