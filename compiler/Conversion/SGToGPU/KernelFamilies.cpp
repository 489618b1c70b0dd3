//===- KernelFamilies.cpp - the CUDA kernel families, one line each ------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/KernelFamilies.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

bool gpu_kernels::isViewOp(Operation *op) {
  return isa<sg::SplitHeadsOp, sg::MergeHeadsOp>(op);
}

SmallVector<Operation *>
gpu_kernels::gatherHeadJobs(Operation *op, bool append,
                            const llvm::SmallPtrSetImpl<Operation *> &done) {
  SmallVector<Operation *> group = {op};
  auto ready = [&](Operation *other) {
    return llvm::all_of(other->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->isBeforeInBlock(op);
    });
  };
  for (Operation &other :
       llvm::make_range(std::next(op->getIterator()), op->getBlock()->end()))
    if ((isa<sg::NormRopeOp>(other) ||
         (append && isa<sg::KVWriteOp>(other))) &&
        !done.contains(&other) && ready(&other))
      group.push_back(&other);
  return group;
}

namespace {
template <typename... Ops>
bool isOneOf(Operation *op, const TargetContext &) {
  return isa<Ops...>(op);
}

/// A projection the CUDA families take (matchProjection: an sg.linear only
/// without a bias, with an [out, in] weight of rank 2).
bool isProjection(Operation *op, const TargetContext &) {
  return succeeded(matchProjection(op));
}

/// The per-query kernel is causal only: attention with image-block ids
/// (a prefill with an image) has no CUDA kernel yet.
bool isCausalAttention(Operation *op, const TargetContext &) {
  auto attn = dyn_cast<sg::AttentionOpInterface>(op);
  return attn && !attn.getAttention().blocks;
}

bool isRowChain(Operation *op, const TargetContext &) {
  return isRowChainOp(op);
}

KernelFamilySet buildCudaFamilies() {
  KernelFamilySet set;
  set.add({"embed", 1, isOneOf<sg::EmbedOp>,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitEmbed(r.op(), c);
           }});
  // Projections: a chunk on tensor cores (bf16) or register-tiled FFMA
  // (f32 rows) where the shapes allow, else a warp per output row.
  set.add({"gemm_mma", 3, gemmMmaApplies,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitGemmMma(r.op(), c, r.has(kernel_option::kLMHead));
           }});
  set.add({"gemm_ffma", 2, gemmFfmaApplies,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitGemmFfma(r.op(), c, r.has(kernel_option::kLMHead));
           }});
  set.add({"gemv_rows", 1, isProjection,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitGemvRows(r.op(), c, r.prologue,
                                 r.has(kernel_option::kLMHead));
           }});
  set.add({"row_chain", 1, isRowChain,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitRowChain(r.op(), c);
           }});
  set.add({"qknorm_rope_append", 1, isOneOf<sg::NormRopeOp>,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitHeadJobs(r.ops, c, c.oneToken());
           }});
  // Attention: one query split over its keys (tensor cores for 8 q heads a
  // kv head), a bf16 chunk on tensor cores, else a warp per query head.
  set.add({"attn_decode_mma", 4, attnDecodeUsesMma,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitAttnDecode(r.op(), c);
           }});
  set.add({"attn_decode_splitk", 3, attnDecodeApplies,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitAttnDecode(r.op(), c);
           }});
  set.add({"attn_prefill", 2, attnPrefillApplies,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitAttnPrefill(r.op(), c);
           }});
  set.add({"attention", 1, isCausalAttention,
           [](const LaunchRequest &r, EmitContext &c) {
             return emitAttention(r.op(), c);
           }});
  set.add({"kv_write", 1, isOneOf<sg::KVWriteOp>,
           [](const LaunchRequest &r, EmitContext &c) {
             auto write = cast<sg::KVWriteOp>(r.op());
             IntegerAttr window = write.getWindowAttr();
             return emitKVWrite(write.getLoc(), write.getValues(),
                                write.getCache(), write.getResult(),
                                window ? window.getInt() : 0, c);
           }});
  return set;
}
} // namespace

const KernelFamilySet &gpu_kernels::cudaKernelFamilies() {
  static const KernelFamilySet families = buildCudaFamilies();
  return families;
}
