//===- CpuFamilies.cpp - the CPU kernel families, one line each ----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/CpuFamilies.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

const OpLowering *CpuKernelFamily::find(Operation *op) const {
  TypeID kind = op->getName().getTypeID();
  const OpLowering *it = llvm::find_if(
      ops, [&](const OpLowering &entry) { return entry.op == kind; });
  return it == ops.end() ? nullptr : it;
}

LogicalResult CpuKernelFamily::lower(Operation *op,
                                     FunctionLowering &state) const {
  // The driver checked the record (SGToCPU.cpp).
  const OpLowering *entry = find(op);
  assert(entry && "a family lowers only the kinds it lists");
  return entry->lower(op, state);
}

namespace {
CpuKernelFamilySet buildCpuFamilies() {
  CpuKernelFamilySet set;
  // Projections: a rows kernel over the widened (and normalized) input and
  // a dispatcher the glue spreads over the threads (Linear.cpp).
  set.add({"cpu_projection", 1, projectionLowerings()});
  set.add({"cpu_norm_rope", 1, normRopeLowerings()});
  set.add({"cpu_attention", 1, attentionLowerings()});
  set.add({"cpu_kv_write", 1, kvWriteLowerings()});
  set.add({"cpu_vision", 1, visionLowerings()});
  set.add({"cpu_elementwise", 1, elementwiseLowerings()});
  return set;
}
} // namespace

const CpuKernelFamilySet &lowering::cpuKernelFamilies() {
  static const CpuKernelFamilySet families = buildCpuFamilies();
  return families;
}
