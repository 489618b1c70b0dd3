//===- ReferenceMath.h - the reference's numerics as IR ---------*- C++ -*-===//
//
// Part of sgc. The scalar and vector arithmetic both lowerings (the CPU
// kernels and the GPU kernels) build the same way, so both round where the
// reference rounds: widening and rounding between the compute dtypes,
// constants, GELU-tanh, softcap, RMSNorm's normalized element, and RoPE's
// frequencies, cos/sin and rotated pair.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_COMMON_REFERENCEMATH_H
#define SGC_COMPILER_CONVERSION_COMMON_REFERENCEMATH_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <utility>

namespace mlir::sgc::lowering {

/// `type` (a scalar, or a vector) with element type `element`.
Type withElementType(Type type, Type element);
/// `v` (any float, or a vector of them) as f32.
Value toF32(ImplicitLocOpBuilder &b, Value v);
/// `v` (f32, or a vector of f32) rounded to element type `type` (round to
/// nearest even); `v` if `type` is f32.
Value roundTo(ImplicitLocOpBuilder &b, Value v, Type type);
/// A weight (element or vector) as f32, as activations of element type `ct`
/// read it: an f16 weight under bf16 activations is first rounded to bf16,
/// as the reference runs a checkpoint in bf16 (QUANT.md: the bf16 reference
/// casts the weights to bf16); under f32 activations it is exact.
Value widenWeight(ImplicitLocOpBuilder &b, Value w, Type ct);
Value constF32(ImplicitLocOpBuilder &b, float value);
/// The constant `scalar`, splat to `like`'s shape when `like` is a vector
/// type.
Value constLike(ImplicitLocOpBuilder &b, TypedAttr scalar, Type like);
/// `value` as f32, splat to `like`'s shape when `like` is a vector type.
Value constF32Like(ImplicitLocOpBuilder &b, float value, Type like);
Value constIndex(ImplicitLocOpBuilder &b, int64_t value);

/// GELU-tanh of an f32 value (or vector), in f32, in the reference's order of ops:
/// 0.5·z·(1 + tanh(√(2/π)·(z + 0.044715·z³))).
Value emitGeluTanh(ImplicitLocOpBuilder &b, Value z);

/// The reference's softcap of a value (or vector) of element type T (bf16 or
/// f32), three rounded
/// steps: round(round(tanh(round(v / cap))) · cap), each in f32.
Value emitSoftcap(ImplicitLocOpBuilder &b, Value v, double cap);

/// The inverse frequencies as the reference computes them in f32:
/// inv[k] = 1 / theta^(f32(2k) / basis) for k < rotated, 0 for rotated <= k <
/// half, each divided by `factor` (linear scaling).
SmallVector<float> inverseFrequencies(int64_t half, int64_t rotated,
                                      int64_t basis, double theta,
                                      double factor);

/// The name of the constant f32 global holding `inv` in `symbolTable` (a
/// module, or a GPU kernel module), created on first use: every op with the
/// same table shares it.
std::string getOrCreateInvFreqGlobal(OpBuilder &b, Operation *symbolTable,
                                     Location loc, ArrayRef<float> inv);

/// One normalized element (or vector of them), round(f32(x)·r·(offset +
/// f32(w))), or round(f32(x)·r) without a weight, in type `ct`; `r` is the
/// f32 scale.
Value emitNormalize(ImplicitLocOpBuilder &b, Value x, Value r, Value w,
                    bool plusOne, Type ct);

/// cos and sin of `pf` · table[k] (f32), each rounded to `ct`, as f32: the
/// reference casts its f32 tables to the activation dtype.
std::pair<Value, Value> emitRopeCosSin(ImplicitLocOpBuilder &b, Value pf,
                                       Value table, Value k, Type ct);

/// The rotate_half RoPE of one pair (x[k], x[k + D/2]) = (lo, hi), f32 in:
/// (lo·c − hi·s, hi·c + lo·s), each product and sum rounded to `ct`.
std::pair<Value, Value> emitRotatePair(ImplicitLocOpBuilder &b, Value lo,
                                       Value hi, Value c, Value sn, Type ct);

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_COMMON_REFERENCEMATH_H
