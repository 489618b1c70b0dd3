//===- WeightRead.h - weights as the kernels read them ----------*- C++ -*-===//
//
// Part of sgc. The CPU kernels read a weight at [row, col .. col + lanes) as
// f32 values through one function, whatever the weight's encoding: a float
// weight is loaded and widened (widenWeight), a block-encoded one
// (`!sg.quant`, ggml's Q8_0 / Q4_0 / Q6_K / Q4_K blocks on a buffer of bytes) is
// dequantized in registers as ggml's reference dequantizer computes it.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_WEIGHTREAD_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_WEIGHTREAD_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::sgc::lowering {

/// The buffer of `rows` weight rows of `k` elements of `wType` (a float
/// type, or `!sg.quant`: the rows' bytes as i8).
MemRefType weightBufferType(int64_t rows, int64_t k, Type wType);

/// w[row, col .. col + lanes) of the weight buffer `w` whose logical
/// element type is `wType`, as f32 (a vector of `lanes`, a scalar for 1)
/// holding the values activations of type `ct` read: bf16(w) under bf16
/// activations for f16 and block-encoded weights. For a block encoding,
/// `col` is a multiple of `lanes` and `lanes` (1, 8 or 16) divides its
/// sub-block (32 for Q8_0 / Q4_0 / Q4_K and the compressed-tensors
/// encodings, 16 for Q6_K).
Value loadWeightF32(ImplicitLocOpBuilder &b, Value w, Type wType, Value row,
                    Value col, int64_t lanes, Type ct);

/// The bf16 pairs w[row, col .. col + 32) as vector<32xbf16>, for the
/// kernels' vdpbf16ps paths: a bf16 weight loaded as it is; an f16 or
/// block-encoded one widened or dequantized to f32 and rounded by
/// vcvtneps2bf16 (the values loadWeightF32 gives under bf16 activations).
/// For a block encoding `col` is a multiple of 32. Only for code that runs
/// where the CPU has AVX512-BF16.
Value loadWeightPairsBF16(ImplicitLocOpBuilder &b, Value w, Type wType,
                          Value row, Value col);

/// Whether loadWeightPairsBF16 reads weights of `wType`.
bool hasWeightPairs(Type wType);

/// The buffer column (element, or byte of a block encoding) where the
/// weight's element `col` lives, or its block starts: for prefetching.
Value weightBufferColumn(ImplicitLocOpBuilder &b, Type wType, Value col);

/// A Q4_K super-block's eight d · sc_j in lanes 0-7 and dmin · m_j in lanes
/// 8-15 (f32), get_scale_min_k4 on all of them at once from its first 16
/// bytes h (d, dmin, then s[12] = h[4, 16)): for j < 4, sc_j = s[j] & 63 and
/// m_j = s[j + 4] & 63; for j >= 4, sc_j = (s[j + 4] & 15) | (s[j − 4] >> 6)
/// << 4 and m_j = (s[j + 4] >> 4) | (s[j] >> 6) << 4.
/// The super-block starts at byte `base` of row `row` of the block buffer
/// `w`; every Q4_K read (dequantized or int8 rows) takes them from here.
Value loadQ4KScalesAndMins(ImplicitLocOpBuilder &b, Value w, Value row,
                           Value base);

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_WEIGHTREAD_H
