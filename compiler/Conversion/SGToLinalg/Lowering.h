//===- Lowering.h - shared state of the sg -> buffers lowering --*- C++ -*-===//
//
// Part of sgc. convert-sg-to-linalg rebuilds each sg function on buffers, op
// by op in program order. This header holds the state one function's
// lowering carries (the tensor -> memref map, the token count, the buffers to
// free) and the entry point of each op family (one .cpp each).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOLINALG_LOWERING_H
#define SGC_COMPILER_CONVERSION_SGTOLINALG_LOWERING_H

#include "lib/abi/sgc/abi.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::sgc::lowering {

/// The state of lowering one function.
class FunctionLowering {
public:
  FunctionLowering(OpBuilder &b, ModuleOp module) : b(b), module(module) {}

  OpBuilder &b;
  ModuleOp module;
  /// Tensor values of the source function -> their buffers.
  IRMapping buffers;
  /// Token count of the function's activations (an index value).
  Value tokens;
  /// The target's execution context (`!llvm.ptr`), the first argument of
  /// every lowered body; dispatchers take it to reach the runtime's threads.
  Value exec;
  /// Result tensors that live in an output argument instead of a new buffer.
  llvm::DenseMap<Value, Value> destinations;
  /// Buffers allocated here, freed before the function returns.
  SmallVector<Value> allocated;
  /// Code to emit right after an op of the source function (cache writes
  /// that must wait for the cache's last reader).
  std::vector<std::pair<Operation *, std::function<void()>>> deferred;

  /// The buffer of a source tensor value (must have been lowered).
  Value lookup(Value tensor) const { return buffers.lookup(tensor); }

  /// A buffer for `result`: its output argument, or a new allocation whose
  /// dynamic (token) dimension is `tokens`.
  Value bufferFor(Location loc, Value result);

  /// A temporary buffer of `shape` (dynamic dims = tokens) and element type
  /// `elementType`, freed at the end of the function.
  Value allocTemp(Location loc, ArrayRef<int64_t> shape, Type elementType);
};

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

/// `type` (a scalar, or a vector) with element type `element`.
Type withElementType(Type type, Type element);
/// `v` (any float, or a vector of them) as f32.
Value toF32(OpBuilder &b, Location loc, Value v);
/// `v` (f32, or a vector of f32) rounded to element type `type` (round to
/// nearest even); `v` if `type` is f32.
Value roundTo(OpBuilder &b, Location loc, Value v, Type type);
/// A weight (element or vector) as f32, as activations of element type `ct`
/// read it: an f16 weight under bf16 activations is first rounded to bf16,
/// as the reference runs a checkpoint in bf16 (QUANT.md: the bf16 reference
/// casts the weights to bf16); under f32 activations it is exact.
Value widenWeight(OpBuilder &b, Location loc, Value w, Type ct);
Value constF32(OpBuilder &b, Location loc, float value);
/// The constant `scalar`, splat to `like`'s shape when `like` is a vector
/// type.
Value constLike(OpBuilder &b, Location loc, TypedAttr scalar, Type like);
/// `value` as f32, splat to `like`'s shape when `like` is a vector type.
Value constF32Like(OpBuilder &b, Location loc, float value, Type like);
Value constIndex(OpBuilder &b, Location loc, int64_t value);
/// Creates the private helper function `name(args)` at the end of
/// `module` and leaves `b` at the start of its body: the caller holds an
/// InsertionGuard around building it.
func::FuncOp createPrivateFunction(OpBuilder &b, ModuleOp module,
                                   StringRef name, ArrayRef<Type> args);
/// Creates the kernel function `name(args)` at the end of `module`, with a
/// C interface and its spec's name (`sg.kernel`), and leaves `b` at the
/// start of its body: the caller holds an InsertionGuard around building it.
func::FuncOp createKernelFunction(OpBuilder &b, ModuleOp module,
                                  StringRef name, ArrayRef<Type> args,
                                  StringRef specName);

/// Declares the dispatcher `name` of `kernel` (whose last two arguments are
/// a row range): it takes the execution context and the kernel's buffers,
/// and the emitted glue defines it by spreading `rows` rows over the
/// runtime's threads (when at least `parallelRows` of them; the glue's
/// default when absent).
func::FuncOp declareDispatcher(OpBuilder &b, ModuleOp module,
                               func::FuncOp kernel, StringRef name,
                               int64_t rows,
                               std::optional<int64_t> parallelRows = {});

/// `buffer` as a memref with a dynamic leading (token) dimension.
Value withDynamicTokens(OpBuilder &b, Location loc, Value buffer);
/// Dimension `dim` of a memref as an index value.
Value dimOf(OpBuilder &b, Location loc, Value memref, int64_t dim);

/// A `linalg.generic` with identity maps over `output`'s shape: `body`
/// receives one scalar per input (same shape as the output) and returns the
/// output scalar.
void emitElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Value output,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// GELU-tanh of an f32 value (or vector), in f32, in the reference's order of ops:
/// 0.5·z·(1 + tanh(√(2/π)·(z + 0.044715·z³))).
Value emitGeluTanh(OpBuilder &b, Location loc, Value z);

/// The reference's softcap of a value (or vector) of element type T (bf16 or
/// f32), three rounded
/// steps: round(round(tanh(round(v / cap))) · cap), each in f32.
Value emitSoftcap(OpBuilder &b, Location loc, Value v, double cap);

/// Stores token i of `values` ([tokens, heads, D]) into `cache` at slot
/// (pos0 + i) mod window (ring, window > 0) or pos0 + i (window 0); on a ring
/// only the last `window` tokens are written. `pos0` is an i64 value.
void emitCacheWrite(OpBuilder &b, Location loc, Value values, Value cache,
                    Value pos0, int64_t window);

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

/// A constant global holding `inv`, shared by every op with the same table.
Value getInvFreqTable(FunctionLowering &state, Location loc,
                      ArrayRef<float> inv);

/// One term of a chained sum: `acc` plus the terms of columns [col, col +
/// lanes) (a vector<lanes x f32> accumulator, or the scalar one for lanes 1).
using ChainTermFn = llvm::function_ref<Value(OpBuilder &, Location, Value col,
                                             int64_t lanes, Value acc)>;

/// The f32 sum over columns [0, n) with `chains` independent accumulators of
/// `lanes` lanes (column c in chain (c / lanes) % chains; the vectors past
/// whole chain steps in chain 0), the chains added pairwise, one
/// reassociating horizontal add, then the columns past whole vectors one at
/// a time. `onStep(col)`, when given, runs at the start of every whole chain
/// step (a prefetch).
Value emitChainedSum(
    OpBuilder &b, Location loc, int64_t n, int64_t lanes, int64_t chains,
    ChainTermFn term,
    llvm::function_ref<void(OpBuilder &, Location, Value)> onStep = {});

/// One step of `count` chained sums at once: their accumulators of one
/// chain in, updated out (the step's shared loads done once).
using ChainTermsFn = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value col, int64_t lanes, ValueRange accs)>;

/// `count` sums, each exactly as emitChainedSum adds its terms (the same
/// ops in the same order per sum), in one pass over the columns: what the
/// terms share (a weight row's load) is loaded once a step.
SmallVector<Value> emitChainedSums(
    OpBuilder &b, Location loc, int64_t n, int64_t lanes, int64_t chains,
    int64_t count, ChainTermsFn term,
    llvm::function_ref<void(OpBuilder &, Location, Value)> onStep = {});

/// A loop over steps [0, count) carrying `inits`, `unroll` steps an
/// iteration and the rest one at a time: `step(s, values)` updates the
/// carried values in place. Returns them after the last step.
SmallVector<Value> emitUnrolledSteps(
    OpBuilder &b, Location loc, int64_t count, int64_t unroll,
    ValueRange inits,
    llvm::function_ref<void(OpBuilder &, Location, Value, SmallVector<Value> &)>
        step);

/// Loads `lanes` consecutive elements of a row from column `col`: a
/// vector<lanes x T>, or the scalar T when lanes is 1.
using RowLoadFn =
    llvm::function_ref<Value(OpBuilder &, Location, Value col, int64_t lanes)>;

/// Lanes of the vectorized norm loops.
constexpr int64_t kNormLanes = 16;

/// RMSNorm's scale of one row, the one definition every norm of a model
/// shares (so fused and unfused norms agree bit for bit): the f32 sum of
/// squares as emitChainedSum adds them (4 chains of kNormLanes lanes), then
/// rsqrt(sum / width + eps).
Value emitRmsScale(OpBuilder &b, Location loc, int64_t width, double eps,
                   RowLoadFn load);

/// One normalized element (or vector of them), round(f32(x)·r·(offset +
/// f32(w))), or round(f32(x)·r) without a weight, in type `ct`; `r` is the
/// f32 scale.
Value emitNormalize(OpBuilder &b, Location loc, Value x, Value r, Value w,
                    bool plusOne, Type ct);

/// buf[idx..., col .. col + lanes): a vector load, or a scalar one for 1.
Value emitRowLoad(OpBuilder &b, Location loc, Value buf, ValueRange idx,
                  Value col, int64_t lanes);

/// Stores `v` (vector or scalar) at buf[idx..., col].
void emitRowStore(OpBuilder &b, Location loc, Value v, Value buf,
                  ValueRange idx, Value col);

/// The i8 global, defined per CPU variant by the object emitter
/// (compiler/Target/CPU/ObjectEmitter.cpp), that is 1 where the CPU has
/// AVX512-BF16, so kernels may use x86vector.avx512.dot (vdpbf16ps).
constexpr llvm::StringLiteral kBf16DotFlag = "sgc_cpu_bf16_dot";

/// i1: whether this CPU variant runs bf16 dot products. Declares the flag
/// global in `module` on first use; LLVM folds the load to a constant.
Value loadBf16DotFlag(OpBuilder &b, Location loc, ModuleOp module);

/// The same for AVX512-VNNI (vpdpbusd on 512-bit vectors, with AVX512-BW).
constexpr llvm::StringLiteral kInt8DotFlag = "sgc_cpu_int8_dot";
Value loadInt8DotFlag(OpBuilder &b, Location loc, ModuleOp module);

/// The i64 global, one per model library and written by the runtime for its
/// host (runtime/src/cpu/host_tuning.cc), of how many bytes ahead the bf16
/// pair rows prefetch their weight stream; 0: not at all. The CPU glue
/// (compiler/Target/CPU/GlueEmitter.cpp) defines it with
/// kDefaultRowPrefetchBytes. Prefetching never changes a result, so any
/// value is correct.
constexpr llvm::StringLiteral kRowPrefetchGlobal = SGC_ABI_ROW_PREFETCH_SYMBOL;
constexpr int64_t kDefaultRowPrefetchBytes = 4096;

/// The value of kRowPrefetchGlobal as an index, declared in `module` on
/// first use.
Value loadRowPrefetchBytes(OpBuilder &b, Location loc, ModuleOp module);

/// Calls `body(col, lanes)` for the columns [0, width) of a row: kNormLanes
/// at a time, then one at a time (lanes 1).
void emitRowChunks(OpBuilder &b, Location loc, int64_t width,
                   llvm::function_ref<void(OpBuilder &, Location, Value col,
                                           int64_t lanes)>
                       body);

/// cos and sin of `pf` · table[k] (f32), each rounded to `ct`, as f32: the
/// reference casts its f32 tables to the activation dtype.
std::pair<Value, Value> emitRopeCosSin(OpBuilder &b, Location loc, Value pf,
                                       Value table, Value k, Type ct);

/// The rotate_half RoPE of one pair (x[k], x[k + D/2]) = (lo, hi), f32 in:
/// (lo·c − hi·s, hi·c + lo·s), each product and sum rounded to `ct`.
std::pair<Value, Value> emitRotatePair(OpBuilder &b, Location loc, Value lo,
                                       Value hi, Value c, Value sn, Type ct);

/// Emits `for i in [lb, ub) step 1` and calls `body` inside it.
void emitFor(OpBuilder &b, Location loc, Value lb, Value ub,
             llvm::function_ref<void(OpBuilder &, Location, Value)> body);

//===----------------------------------------------------------------------===//
// Op families (one .cpp each). Each lowers `op` at the builder's insertion
// point and maps its results; failure means a diagnostic was emitted.
//===----------------------------------------------------------------------===//

/// Elementwise.cpp: embed, rms_norm, split/merge heads, rope, partial_rope,
/// gelu_tanh, mul, add, layer_scalar, softcap.
LogicalResult lowerElementwiseFamily(Operation *op, FunctionLowering &state);
/// NormRope.cpp: norm_rope.
LogicalResult lowerNormRope(Operation *op, FunctionLowering &state);
/// Attention.cpp: sliding_attn, full_attn, encoder_attn, kv_write.
LogicalResult lowerAttentionFamily(Operation *op, FunctionLowering &state);
/// Vision.cpp: layer_norm, affine, standardize, axial_rope,
/// add_position_embedding, avg_pool_2d, position_pool.
LogicalResult lowerVisionFamily(Operation *op, FunctionLowering &state);
/// Linear.cpp: linear, norm_linear, gated_mlp (kernel + dispatcher call).
LogicalResult lowerLinear(Operation *op, FunctionLowering &state);

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_SGTOLINALG_LOWERING_H
