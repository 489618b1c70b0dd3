//===- KernelFamilies.h - the CUDA kernel families --------------*- C++ -*-===//
//
// Part of sgc. The CUDA target's registry (KernelRegistry.h): each family
// applies to an op on this chip at this token bound and emits its launch.
// sg-select-kernels picks, per op, the applying family of the highest
// benefit and records it on the op (#sg.kernel); convert-sg-to-gpu emits
// what the record names. A new family is its own .cpp plus one line in
// KernelFamilies.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOGPU_KERNELFAMILIES_H
#define SGC_COMPILER_CONVERSION_SGTOGPU_KERNELFAMILIES_H

#include "compiler/Conversion/KernelRegistry.h"
#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "dialects/SG/IR/SGDialect.h"

namespace mlir::sgc::gpu_kernels {

/// What a family's emitter is asked for: the op, with (head jobs) the later
/// ops it takes into the same launch, the choices recorded on it, and the
/// row chain a projection computes in its prologue.
struct LaunchRequest {
  ArrayRef<Operation *> ops;
  sg::KernelAttr choice;
  const RowChain *prologue = nullptr;
  Operation *op() const { return ops.front(); }
  bool has(StringRef option) const { return choice && choice.has(option); }
};

struct KernelFamily {
  StringRef name;
  unsigned benefit;
  bool (*applies)(Operation *op, const TargetContext &ctx);
  FailureOr<KernelUse> (*emit)(const LaunchRequest &request,
                               EmitContext &ctx);
};

using KernelFamilySet = KernelRegistry<KernelFamily, TargetContext>;

/// The CUDA families.
const KernelFamilySet &cudaKernelFamilies();

/// Option names of #sg.kernel that the CUDA lowering reads.
namespace kernel_option {
/// A projection that writes the entry's logits (KernelUse::writesArgmax in
/// decode, Projection::wantedRowsOnly in a chunk).
constexpr StringLiteral kLMHead = "lm_head";
/// A projection whose prologue computes the row chain before it (`"chain"`).
constexpr StringLiteral kPrologue = "prologue";
} // namespace kernel_option

/// Families of ops that another op's launch computes (#sg.kernel's family
/// names, no emitters): `prologue`, a row chain the next projection of the
/// step computes in its prologue; `carried`, the step's last row chain,
/// which the next step computes (its first projection's prologue where the
/// call says sg.carried_prologue, else a row_chain launch before it);
/// `fused`, an op the launch of an op before it computes.
namespace pseudo_family {
constexpr StringLiteral kPrologue = "prologue";
constexpr StringLiteral kCarried = "carried";
constexpr StringLiteral kFused = "fused";
} // namespace pseudo_family

/// The ops that join `op` (an sg.norm_rope) in one head-jobs launch: the
/// later sg.norm_rope ops (and, with `append`, sg.kv_write ops) of its
/// block whose operands exist at `op` and that no launch took yet.
SmallVector<Operation *>
gatherHeadJobs(Operation *op, bool append,
               const llvm::SmallPtrSetImpl<Operation *> &done);

/// Whether `op` is one of the rowwise ops a row chain is made of.
bool isRowChainOp(Operation *op);
/// Whether `op` launches nothing (split_heads, merge_heads: views).
bool isViewOp(Operation *op);

} // namespace mlir::sgc::gpu_kernels

#endif // SGC_COMPILER_CONVERSION_SGTOGPU_KERNELFAMILIES_H
