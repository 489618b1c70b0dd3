//===- Int8Dot.h - decode rows as integer dot products ----------*- C++ -*-===//
//
// Part of sgc. Where a variant has AVX512-VNNI, the decode rows of Q8_0,
// Q4_0, Q6_K and Q4_K weights multiply the blocks' integers by integer
// activations, one vpdpbusd per pair of blocks of 32 and digit, then one
// float multiply-add by the scales: 15 GB/s of Q4_0 blocks on one Zen 4
// core where the bf16 pairs (dequantized in registers) moved 9
// (bench/gemv). The activations are
// quantized per block of 32, as llama.cpp's CPU backend does (its "q8_0"
// vector dot type), but with two int8 digits instead of one: x = d / 256 ·
// (256 · high + low). One digit (llama.cpp's) put the tiny Gemma 3's Q4_0
// logits 6.84e-3 of the row range from the f32 reference, further than
// llama.cpp's own 6.39e-3 (our activations are bf16 before they are
// quantized); two digits leave 2^-16 of the block's maximum, under bf16's
// own rounding: 3.76e-3, and the weights are exact (the bf16 pairs round
// them to bf16). The second digit costs one vpdpbusd, a shift and an add a
// pair (about 10 % of the row's time, measured in C).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_INT8DOT_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_INT8DOT_H

#include "compiler/Conversion/SGToCPU/LinearSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::sgc::lowering::linear {

/// Bytes of a token's activation records (below) that one row at a time
/// reads from L1 while they keep up with the weights (bench/gemv, Zen 4,
/// 1 thread: 15 GB/s of Q4_0 blocks at K = 3,840 and 14 at K = 5,376, 21
/// KiB). Past it one row a pass ran at 9 GB/s (K = 15,360, 60 KiB of
/// records from L2), and K chunks that fit L1 were slower still (8 GB/s at
/// K = 5,376 in two chunks: the weight rows are then read piecewise); decode
/// takes kInt8WideRows rows a pass instead, each record load serving them
/// all (12 GB/s at K = 15,360).
constexpr int64_t kInt8RecordsInL1 = 24 * 1024;
constexpr int64_t kInt8WideRows = 4;

/// Whether decode rows of `wType` weights over K = `k` take int8
/// activations: Q8_0, Q4_0, Q6_K and Q4_K blocks, K in whole pairs of blocks of
/// 32 and in whole blocks.
bool hasInt8Dot(Type wType, int64_t k);

/// Rows a pass of the int8 decode rows (one token's, outside batched
/// decode): 1 while the records fit kInt8RecordsInL1 or the rows take Q4_0's
/// groups (usesQ4Groups: their weights bypass L1), else kInt8WideRows.
int64_t int8RowsPerPass(Type wType, int64_t k);

/// The activations of the int8 rows, per token (`@sgc_quant_rows_…` writes
/// them): with t = x · 127 / max|x of its block of 32|, the digits high =
/// round-to-even(t) and low = round-to-even(256 · (t − high)) (at most
/// 127), so x = d / 256 · (256 · high + low) with d = max / 127 to 2^-16 of
/// the block's maximum. One 256-byte record per pair of blocks, read in
/// order (one buffer and one stream; four separate arrays measured the
/// same in bench/gemv):
///   [0, 64)    high, the pair's 64 elements     (i8)
///   [64, 128)  low                               (i8)
///   [128, 192) each block's start, −zero point · Σ (256 · high + low), in
///              the first of its 8 lanes, the others 0; for Q6_K, whose
///              scales change every 16 weights, each 16's start in lanes 0
///              and 4 of the block's 8                 (i32 x 16)
///   [192, 256) each block's d / 256 over its 8 lanes    (f32 x 16)
/// The buffer is [tokens, 4 · K] bytes. Q4_K, and Q4_0 over K a multiple of
/// 256, take the groups' records below instead.
constexpr int64_t kInt8RecordBytes = 256;

/// A block of 32 f32 activations (`halves`: its two vectors of 16) as
/// integers in [−range, range]: its scale max|x| / range and the inverse
/// range / max|x| (0 for an all-zero block, whose integers are then 0).
std::pair<Value, Value> emitBlockScale(ImplicitLocOpBuilder &b,
                                       ArrayRef<Value> halves, float range);

/// Stores `v` as bytes into the records at [s, at) (bitcast to i8 unless it
/// is i8 already).
void storeRecordBytes(ImplicitLocOpBuilder &b, Value records, Value s, Value at,
                      Value v);

/// Loads `type` from the records at [s, at) (its bytes, bitcast).
Value loadRecordBytes(ImplicitLocOpBuilder &b, Value records, Value s, Value at,
                      VectorType type);

/// A constant vector of `type` with every lane `value`.
Value vecConst(ImplicitLocOpBuilder &b, VectorType type, Attribute value);

/// The buffer type of the int8 activations for K = `k`.
MemRefType int8ActivationType(MLIRContext *ctx, int64_t k);

/// `@sgc_quant_rows_<K>_<offset>(xs, records)`: the first rows of xs (f32),
/// as many as records has (none when the call takes no int8 rows),
/// quantized for weights of `wType`.
func::FuncOp getOrCreateQuantRows(OpBuilder &b, ModuleOp module, int64_t k,
                                  Type wType);

/// sum_k w[row, k] · x[s, k] for each row of `rows` and token of `tokens`
/// (row-major: rows.size() x tokens.size() sums), over the rows' pairs of
/// blocks as integer dot products on the tokens' records: the chains of the
/// other row paths (kAccumulators x kLanes lanes) over K / 4 positions, a
/// step of kLanes covering one pair (64 weights, their 16 lanes of i32
/// sums). K / 4 is a multiple of kLanes, so the scalar tail of
/// emitChainedSums never runs. Each sum is the same in a group of rows and
/// tokens as alone.
SmallVector<Value> emitRowDotsInt8(ImplicitLocOpBuilder &b, Value records,
                                   Value w, Type wType, ValueRange rows,
                                   ValueRange tokens, int64_t k);

/// Q4_0's and Q4_K's decode rows over K a multiple of kQ4GroupElements take
/// their own records and kernel (Int8Q4Groups.cpp): per group of 256
/// weights (4 pairs of blocks of 32; Q4_K's super-block),
/// kQ4GroupRecordBytes of a token's record buffer (which int8ActivationType
/// sizes for the larger two-digit records):
///   [128 · p, 128 · p + 64)  pair p's x_lo: i16 q of elements 0-15 of its
///                            first block, then of its second
///   [128 · p + 64, + 128)    x_hi: elements 16-31 likewise
///   [512, 544)               each block's sa = max|x| / 32767 (f32 x 8)
///   [544, 576)               each block's −z · sa · Σ q (f32 x 8), z = 8
///                            (Q4_0's zero point) or 1 (Q4_K: its minimum
///                            multiplies it)
/// with q = round-to-even(x / sa), so x = sa · q to 2^-16 of the block's
/// maximum.
constexpr int64_t kQ4GroupElements = 256;
constexpr int64_t kQ4GroupRecordBytes = 576;
constexpr int64_t kQ4PairRecordBytes = 128;
constexpr int64_t kQ4ScaleField = 512;

/// Q4_0's block: 32 weights as an f16 scale d, then 16 bytes whose low
/// nibbles are elements 0-15 and high nibbles 16-31, each q + 8.
constexpr int64_t kQ4_0Block = 32;
constexpr int64_t kQ4_0BlockBytes = 18;

/// Whether decode rows of `wType` over K = `k` take the groups.
bool usesQ4Groups(Type wType, int64_t k);

/// `@sgc_quant_rows_<K>_q4g` (Q4_0) or `_q4kg` (Q4_K)`(xs, records)`: the
/// groups' records of xs.
func::FuncOp getOrCreateQ4GroupRows(OpBuilder &b, ModuleOp module, int64_t k,
                                    Type wType);

/// emitRowDotsInt8 for the groups: each sum the same in a group of rows and
/// tokens as alone.
SmallVector<Value> emitRowDotsQ4Groups(ImplicitLocOpBuilder &b, Value records,
                                       Value w, Type wType, ValueRange rows,
                                       ValueRange tokens, int64_t k);

} // namespace mlir::sgc::lowering::linear

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_INT8DOT_H
