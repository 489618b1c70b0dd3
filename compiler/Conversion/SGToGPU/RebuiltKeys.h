//===- RebuiltKeys.h - keys rebuilt from a V-only cache, on CUDA -*- C++ -*-===//
//
// Part of sgc. An `sg.full_attn ... keys_from_values(%w_k)` caches V only
// (SERVE.md §3, Gemma 4's full layers): every attention kernel rebuilds the
// key of each position it reads, RoPE_j(round(V_j · w_k)), with the CPU
// path's formula and roundings (SGToCPU/RebuiltKeys.cpp: cos and sin by
// attention::emitCosSin), so both targets build the same key bits.
//
// The kernels that read keys in chunks of n consecutive elements (a 16-byte
// load, or one element) rebuild each chunk where they load it: a chunk in
// the rotated columns also reads its partner chunk d/2 away, both from the
// same V row. The tensor-core kernels stage key tiles in shared memory: they
// stage round(V · w_k) and rotate the tile's pairs there in a pass of their
// own, one pair a thread at a time (far fewer registers than rotating the
// chunks in flight).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOGPU_REBUILTKEYS_H
#define SGC_COMPILER_CONVERSION_SGTOGPU_REBUILTKEYS_H

#include "compiler/Conversion/SGToGPU/Kernels.h"

namespace mlir::sgc::gpu_kernels {

/// The rebuild an attention op asks for, read from the op.
struct KeyRebuildSpec {
  /// w_k (the sg value, [d]); null when the op caches its keys.
  Value weight;
  int64_t d = 0;
  /// Frequencies that rotate: pairs (c, c + d/2) for c < rotated.
  int64_t rotated = 0;
  /// The rotation's inverse frequencies, d/2 of them (0 past `rotated`).
  SmallVector<float> invFreq;
  double theta = 0;
  int64_t basis = 0;
  explicit operator bool() const { return weight != nullptr; }
  /// Whether chunks of `n` elements never straddle a rotated border.
  bool takesChunks(int64_t n) const {
    return rotated % n == 0 && (d / 2) % n == 0;
  }
  /// The spec entries a kernel records (none without a rebuild).
  void appendSpecAttrs(Builder &a, SmallVectorImpl<NamedAttribute> &attrs) const;
};

/// The rebuild of `op` (an sg.full_attn with keys_from_values), or an empty
/// spec.
KeyRebuildSpec keyRebuildOf(Operation *op);

/// The rebuild inside a kernel: its weight parameter and the frequency
/// table (a constant global of the kernel module).
struct KeyRebuild {
  Value weight, invFreq;
  int64_t half = 0, rotated = 0;
  Type ct;
};
KeyRebuild keyRebuildIn(KernelBody &k, const KeyRebuildSpec &spec,
                        Value weightParam, Type ct);

/// The n elements [col, col + n) of the key at position `pos` (index) as
/// type ct (a vector<n>, or a scalar for n = 1); `loadV(c)` loads the same
/// elements of its V row at column c. `col` is a multiple of n, and n
/// divides d/2 and `rotated` (KeyRebuildSpec::takesChunks).
Value emitRebuiltKeyChunk(KernelBody &k, const KeyRebuild &r, Value pos,
                          Value col, int64_t n,
                          llvm::function_ref<Value(Value)> loadV);

/// round(v · w_k) of the n elements `v` (a vector<n>, or a scalar) of a V
/// row at column `col`: the key before its rotation.
Value emitNormedKeyChunk(KernelBody &k, const KeyRebuild &r, Value col,
                         int64_t n, Value v);

/// Rotates the keys staged (as emitNormedKeyChunk's) in the rows of `tile`
/// (a workgroup [rows, >= d] buffer), row i the key at position
/// firstPos + i: thread `tid` of `threads` takes pairs tid, tid + threads,
/// ... The caller puts barriers around it.
void emitRotateKeyTile(KernelBody &k, const KeyRebuild &r, Value tile,
                       int64_t rows, Value firstPos, Value tid,
                       int64_t threads);

} // namespace mlir::sgc::gpu_kernels

#endif // SGC_COMPILER_CONVERSION_SGTOGPU_REBUILTKEYS_H
