//===- AttnDecode.h - the split-K decode attention's shared pieces -*- C++ -*-===//
//
// Part of sgc. What AttnDecode.cpp (the family: shapes, the FFMA parts, the
// last block's combine) and AttnDecodeMma.cpp (the parts on tensor cores)
// share: the shape of an attention call and the values of the kernel under
// construction.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOGPU_ATTNDECODE_H
#define SGC_COMPILER_CONVERSION_SGTOGPU_ATTNDECODE_H

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/SGToGPU/RebuiltKeys.h"

#include <optional>

namespace mlir::sgc::gpu_kernels {

/// Warps of an attn_decode_splitk block.
constexpr int64_t kAttnDecodeWarps = 4;

/// One decode attention call and how the kernel splits it.
struct AttnShape {
  Value q, kNew, vNew, kCache, vCache;
  int64_t window = 0;
  double scale = 1.0;
  int64_t hq = 0, hkv = 0, d = 0, dv = 0, slots = 0, group = 0;
  /// Parts: `splits` blocks per kv head, `keyGroups` warps a block.
  int64_t headsPerWarp = 0, keyGroups = 0, splits = 0;
  /// The parts on tensor cores (AttnDecodeMma.cpp).
  bool mma = false;
  Type ct;
  /// A V-only cache: the keys rebuilt from V (kCache is vCache).
  KeyRebuildSpec rebuild;
};

/// The kernel's parameters and the block's coordinates: kv head `g`, split
/// `split`, its keys [begin, stop).
struct AttnDecodeKernel {
  KernelBody &k;
  const AttnShape &s;
  Value q, kNew, vNew, kCache, vCache, out, partials, counters;
  Value g, split, tid, warp, lane, pos0, begin, stop;
  std::optional<KeyRebuild> keys;
};

/// Whether the tensor-core parts serve `s` (bf16, 8 q heads per kv head, a
/// head dim of whole 64-column warp slices).
/// Its shared memory is static: within `chip`'s limit without the opt-in.
bool mmaPartsApply(const AttnShape &s, const CudaChip &chip);

/// Writes the block's part (o, m, l of every head of the group) to
/// partials[g][split] with mma.sync: S = Q K^T over the key tiles (the
/// group's heads as the M rows), an online softmax, O += P V.
void emitMmaParts(AttnDecodeKernel &a);

} // namespace mlir::sgc::gpu_kernels

#endif // SGC_COMPILER_CONVERSION_SGTOGPU_ATTNDECODE_H
