//===- Lowering.h - shared state of the sg -> buffers lowering --*- C++ -*-===//
//
// Part of sgc. convert-sg-to-cpu rebuilds each sg function on buffers, op
// by op in program order. This header holds the state one function's
// lowering carries (the tensor -> memref map, the token count, the buffers to
// free) and the entry point of each op family (one .cpp each).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_LOWERING_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_LOWERING_H

#include "compiler/Conversion/Common/IndexExpr.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "lib/abi/sgc/abi.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
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

/// An upstream body builder (`OpBuilder &, Location, args...`: scf.for,
/// scf.if, linalg.generic) that runs `body(ImplicitLocOpBuilder &, args...)`
/// at the builder's insertion point and the location it is given.
template <typename Body>
auto implicitLoc(Body body) {
  return [body](OpBuilder &b, Location loc, auto... args) {
    ImplicitLocOpBuilder ib(loc, b);
    return body(ib, args...);
  };
}

/// `buffer` as a memref with a dynamic leading (token) dimension.
Value withDynamicTokens(ImplicitLocOpBuilder &b, Value buffer);

/// A `linalg.generic` with identity maps over `output`'s shape: `body`
/// receives one scalar per input (same shape as the output) and returns the
/// output scalar.
void emitElementwise(
    ImplicitLocOpBuilder &b, ValueRange inputs, Value output,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, ValueRange)> body);

/// Stores token i of `values` ([tokens, heads, D]) into `cache` at slot
/// (pos0 + i) mod window (ring, window > 0) or pos0 + i (window 0); on a ring
/// only the last `window` tokens are written. `pos0` is an i64 value.
void emitCacheWrite(ImplicitLocOpBuilder &b, Value values, Value cache,
                    Value pos0, int64_t window);

/// A constant global holding `inv`, shared by every op with the same table.
Value getInvFreqTable(FunctionLowering &state, Location loc,
                      ArrayRef<float> inv);

/// One term of a chained sum: `acc` plus the terms of columns [col, col +
/// lanes) (a vector<lanes x f32> accumulator, or the scalar one for lanes 1).
using ChainTermFn = llvm::function_ref<Value(ImplicitLocOpBuilder &, Value col,
                                             int64_t lanes, Value acc)>;

/// The f32 sum over columns [0, n) with `chains` independent accumulators of
/// `lanes` lanes (column c in chain (c / lanes) % chains; the vectors past
/// whole chain steps in chain 0), the chains added pairwise, one
/// reassociating horizontal add, then the columns past whole vectors one at
/// a time. `onStep(col)`, when given, runs at the start of every whole chain
/// step (a prefetch).
Value emitChainedSum(
    ImplicitLocOpBuilder &b, int64_t n, int64_t lanes, int64_t chains,
    ChainTermFn term,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> onStep = {});

/// One step of `count` chained sums at once: their accumulators of one
/// chain in, updated out (the step's shared loads done once).
using ChainTermsFn = llvm::function_ref<SmallVector<Value>(
    ImplicitLocOpBuilder &, Value col, int64_t lanes, ValueRange accs)>;

/// `count` sums, each exactly as emitChainedSum adds its terms (the same
/// ops in the same order per sum), in one pass over the columns: what the
/// terms share (a weight row's load) is loaded once a step.
SmallVector<Value> emitChainedSums(
    ImplicitLocOpBuilder &b, int64_t n, int64_t lanes, int64_t chains,
    int64_t count, ChainTermsFn term,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> onStep = {});

/// A loop over steps [0, count) carrying `inits`, `unroll` steps an
/// iteration and the rest one at a time: `step(s, values)` updates the
/// carried values in place. Returns them after the last step.
SmallVector<Value>
emitUnrolledSteps(ImplicitLocOpBuilder &b, int64_t count, int64_t unroll,
                  ValueRange inits,
                  llvm::function_ref<void(ImplicitLocOpBuilder &, Value,
                                          SmallVector<Value> &)>
                      step);

/// Loads `lanes` consecutive elements of a row from column `col`: a
/// vector<lanes x T>, or the scalar T when lanes is 1.
using RowLoadFn =
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value col, int64_t lanes)>;

/// Lanes of the vectorized norm loops.
constexpr int64_t kNormLanes = 16;

/// RMSNorm's scale of one row, the one definition every norm of a model
/// shares (so fused and unfused norms agree bit for bit): the f32 sum of
/// squares as emitChainedSum adds them (4 chains of kNormLanes lanes), then
/// rsqrt(sum / width + eps).
Value emitRmsScale(ImplicitLocOpBuilder &b, int64_t width, double eps,
                   RowLoadFn load);

/// The i8 global, defined per CPU variant by the object emitter
/// (compiler/Target/Host/ObjectEmitter.cpp), that is 1 where the CPU has
/// AVX512-BF16, so kernels may use x86vector.avx512.dot (vdpbf16ps).
constexpr llvm::StringLiteral kBf16DotFlag = "sgc_cpu_bf16_dot";

/// i1: whether this CPU variant runs bf16 dot products. Declares the flag
/// global in `module` on first use; LLVM folds the load to a constant.
Value loadBf16DotFlag(ImplicitLocOpBuilder &b, ModuleOp module);

/// The same for AVX512-VNNI (vpdpbusd on 512-bit vectors, with AVX512-BW).
constexpr llvm::StringLiteral kInt8DotFlag = "sgc_cpu_int8_dot";
Value loadInt8DotFlag(ImplicitLocOpBuilder &b, ModuleOp module);

/// The same for where the 4-bit decode rows prefetch their weights: 1 into
/// L1 (prefetcht0), 0 into L2 only (prefetcht1). The object emitter sets it
/// by the variant's CPU: L2 on AMD Zen, where records kept in L1 ran faster
/// (Zen 4), L1 elsewhere (Intel Emerald Rapids: B8's Q4_0 decode 3-5 %
/// faster on 1 and 2 threads). A prefetch changes no result.
constexpr llvm::StringLiteral kPrefetchToL1Flag = "sgc_cpu_prefetch_to_l1";
Value loadPrefetchToL1Flag(ImplicitLocOpBuilder &b, ModuleOp module);

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
Value loadRowPrefetchBytes(ImplicitLocOpBuilder &b, ModuleOp module);

/// The i64 global, like kRowPrefetchGlobal one per library and written by
/// the runtime, that is nonzero where the host's vdpbf16ps is slower than
/// FMAs on widened values (runtime/src/cpu/bf16_dot_probe.cc): the bf16
/// tiles then take FMAs that add the same products in the same order (not
/// attention's paired sums: a key's widening costs as much as the FMA, and
/// they ran slower so on Emerald Rapids). 0 by default.
constexpr llvm::StringLiteral kBf16OnFmaGlobal = SGC_ABI_BF16_ON_FMA_SYMBOL;

/// i1: whether kBf16OnFmaGlobal is set, declared in `module` on first use.
Value loadBf16OnFma(ImplicitLocOpBuilder &b, ModuleOp module);

/// Calls `body(col, lanes)` for the columns [0, width) of a row: kNormLanes
/// at a time, then one at a time (lanes 1).
void emitRowChunks(
    ImplicitLocOpBuilder &b, int64_t width,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value col, int64_t lanes)>
        body);

/// Emits `scf.for` over [lb, ub) by `step` (constants, created in that
/// order) carrying `inits`; `body(iv, carried)` builds an iteration, its
/// yield included.
scf::ForOp emitLoop(
    ImplicitLocOpBuilder &b, int64_t lb, int64_t ub, int64_t step,
    ValueRange inits,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, ValueRange)> body);

/// Emits `for i in [lb, ub) step 1` and calls `body` inside it.
void emitFor(ImplicitLocOpBuilder &b, Value lb, Value ub,
             llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> body);

//===----------------------------------------------------------------------===//
// Op families (one .cpp each): per op kind, how it lowers. Each lowering
// emits at the builder's insertion point and maps the op's results; failure
// means a diagnostic was emitted.
//===----------------------------------------------------------------------===//

/// One op kind a family lowers, by its TypeID (as a pattern's root).
struct OpLowering {
  TypeID op;
  LogicalResult (*lower)(Operation *op, FunctionLowering &state);
};

/// The entry of ops of type OpT, lowered by `Fn`.
template <typename OpT, LogicalResult (*Fn)(OpT, FunctionLowering &)>
OpLowering loweringOf() {
  return {TypeID::get<OpT>(), [](Operation *op, FunctionLowering &state) {
            return Fn(cast<OpT>(op), state);
          }};
}

/// Elementwise.cpp: embed, rms_norm, split/merge heads, take_row,
/// stack_rows, rope, partial_rope, gelu_tanh, mul, add, layer_scalar,
/// softcap.
ArrayRef<OpLowering> elementwiseLowerings();
/// NormRope.cpp: norm_rope.
ArrayRef<OpLowering> normRopeLowerings();
/// Attention.cpp: sliding_attn, full_attn, encoder_attn.
ArrayRef<OpLowering> attentionLowerings();
/// KVWrite.cpp: kv_write.
ArrayRef<OpLowering> kvWriteLowerings();
/// Vision.cpp: merge_image_rows, layer_norm, affine, standardize,
/// axial_rope, add_position_embedding, avg_pool_2d, position_pool.
ArrayRef<OpLowering> visionLowerings();
/// Linear.cpp: linear, norm_linear, gated_mlp (kernel + dispatcher call).
ArrayRef<OpLowering> projectionLowerings();

} // namespace mlir::sgc::lowering

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_LOWERING_H
