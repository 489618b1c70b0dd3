//===- AttentionRows.h - the CPU attention kernels' rows --------*- C++ -*-===//
//
// Part of sgc. What the decoder's attention (Attention.cpp) and the vision
// towers' encoder attention (EncoderAttention.cpp) build their kernels
// from: dot products and value updates over a head's row, the rounded
// store of a head's sums, the weighted sums over value rows
// (WeightedSums.cpp), a two-way scf.if, and the keys rebuilt from a V-only
// cache (RebuiltKeys.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_ATTENTIONROWS_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_ATTENTIONROWS_H

#include "compiler/Conversion/Common/KeyRotation.h"
#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include <functional>

namespace mlir::sgc::lowering {

/// sg.encoder_attn (EncoderAttention.cpp).
LogicalResult lowerEncoderAttention(sg::EncoderAttnOp op,
                                    FunctionLowering &state);

/// sg.kv_write, in place: the result is the cache's buffer (KVWrite.cpp).
LogicalResult lowerKVWrite(sg::KVWriteOp op, FunctionLowering &state);

namespace attention {

/// Lanes of the vectorized dot products and value updates.
constexpr int64_t kLanes = 16;

/// out[i, h, :] = round(acc[:]) for the `dv` f32 sums of one query head.
void storeRoundedRow(ImplicitLocOpBuilder &b, Value zero, Value acc, Value out,
                     Value i, Value h, int64_t dv, Type ct);

/// sum_d f32(a[d]) · f32(b[d]) over d in [0, n) for the rows `a` and `b`
/// (memref + leading indices): one chain of 16-lane partial sums (a multiply,
/// then an add), one reassociating horizontal add, then a scalar tail.
Value emitDot(ImplicitLocOpBuilder &b, int64_t n, Value aBuf, ValueRange aIdx,
              Value bBuf, ValueRange bIdx);

/// acc[dd] += p · f32(v[dd]) for dd in [0, n) (a multiply, then an add, per
/// element: the order over keys is the caller's).
void emitAxpy(ImplicitLocOpBuilder &b, int64_t n, Value p, Value acc,
              Value vBuf, ValueRange vIdx);

/// One run of keys of a weighted sum: keys t in [tBegin, tEnd) of the
/// probabilities `probs`, key t's value row at `rowOf(t)` of `vBuf`.
struct ValueRun {
  Value tBegin, tEnd, vBuf;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, Value)> rowOf;
};

/// A chunk's bf16 value rows packed in pairs for vdpbf16ps (emitPackValuePairs
/// in Attention.cpp): pairs[r, g, 2c + 1] = v[2r, g, c] and pairs[r, g, 2c] =
/// v[2r + 1, g, c], zeros past the chunk's last row. The weighted sum visits
/// rows [rowBegin, rowLast] of kv head g, row rowBegin's probability at
/// index tBegin (then in row order).
struct PairedValues {
  Value pairs, g, rowBegin, rowLast, tBegin;
};

/// out[i, h, :] = round(sum_t probs[t] · f32(v_t[:])) over the runs in
/// order, then (with `paired`) the paired rows: per column block of
/// kSumVectors x kLanes, the block's f32 sums stay in registers across every
/// key (one FMA per value, exact products with bf16 probabilities and
/// values, in key order; a pair of paired rows one vdpbf16ps, which adds
/// the earlier product first); columns past whole vectors one at a time (not
/// with `paired`: dv a multiple of kLanes).
void emitWeightedSum(ImplicitLocOpBuilder &b, int64_t dv, Value probs,
                     ArrayRef<ValueRun> runs, Value out, Value i, Value h,
                     Type ct, const PairedValues *paired = nullptr);

/// The weighted sums of the query heads first + k, k in [0, group), of one
/// query row together: per column block of kGroupSumVectors x kLanes every
/// value vector is loaded once for all the heads (each head's sums in
/// registers, its FMAs in key order as emitWeightedSum's: the same bits),
/// and the sums of heads in [hLo, hHi) stored. `probsOf(k)` is head first +
/// k's probabilities; dv is a multiple of kLanes.
void emitGroupWeightedSum(
    ImplicitLocOpBuilder &b, int64_t dv, int64_t group,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, int64_t)> probsOf,
    ArrayRef<ValueRun> runs, Value out, Value i, Value first, Value hLo,
    Value hHi, Type ct);

/// `cond ? thenFn() : elseFn()` as an scf.if yielding one `type` value.
Value emitIfElse(ImplicitLocOpBuilder &b, Type type, Value cond,
                 llvm::function_ref<Value(ImplicitLocOpBuilder &)> thenFn,
                 llvm::function_ref<Value(ImplicitLocOpBuilder &)> elseFn);

/// The keys of a cache that holds V only (sg.full_attn keys_from_values,
/// RebuiltKeys.cpp).
struct RebuiltKeys {
  /// k_norm's weight, memref<d x T>.
  Value weight;
  /// The rotation's inverse frequencies, memref<d/2 x f32> (0 past
  /// `rotated`).
  Value invFreq;
  /// Frequencies that rotate: pairs (k, k + d/2) for k < rotated.
  int64_t rotated = 0;
};

/// key[keyIdx..., 0:d) = the key of the V row v[vIdx..., :] at position
/// `pos` (an index): RoPE_pos(round(v · w)), rounded to `ct` as sg.norm_rope
/// rounds keys, into `key` of element type `ct`.
void emitRebuiltKey(ImplicitLocOpBuilder &b, const RebuiltKeys &keys, int64_t d,
                    Value v, ValueRange vIdx, Value pos, Value key,
                    ValueRange keyIdx, Type ct);

/// What the scores of a V-only cache's keys loop over.
struct RebuiltKeyLoops {
  int64_t d, group;
  Type ct;
  /// The cache (V), [slots, kv heads, d]; keys [0, pos0) are read.
  Value cache, pos0;
  /// Query rows, the scores' row length, the query heads [headBegin,
  /// headEnd) of this call.
  Value tokens, capacity, headBegin, headEnd;
};

/// `sumRow(i, g, first, hLo, hHi, rowOf)`: query row i's work for kv head g
/// after its heads attended, `rowOf(k)` the scores row of head first + k.
using RowSumFn = llvm::function_ref<void(
    ImplicitLocOpBuilder &, Value i, Value g, Value first, Value hLo, Value hHi,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, int64_t)> rowOf)>;

/// Per kv head g of the call's query heads and block of query rows: each
/// cached key rebuilt once into a row buffer, `score(i, h, key)` of each of
/// the block's rows i and g's heads h stored at the key's index of the
/// (i, h) scores row; then `attend(i, h, row)` with that row (a 1-D f32
/// memref of `capacity`) for each of g's heads, and `sumRow` (when given)
/// once per row. Blocks hold up to 16 rows, their scores within 16 MiB.
void emitRebuiltKeyScores(ImplicitLocOpBuilder &b, const RebuiltKeys &keys,
                          const RebuiltKeyLoops &loops,
                          llvm::function_ref<Value(ImplicitLocOpBuilder &,
                                                   Value i, Value h, Value key)>
                              score,
                          llvm::function_ref<void(ImplicitLocOpBuilder &,
                                                  Value i, Value h, Value row)>
                              attend,
                          RowSumFn sumRow = {});

} // namespace attention
} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_ATTENTIONROWS_H
