//===- Kernels.h - shared state of the sg -> gpu kernel emitters -*- C++ -*-===//
//
// Part of sgc. convert-sg-to-gpu replaces every step of the plan that calls an
// sg body by launches of specialized kernels, one `gpu.func` per distinct
// KernelSpec in `gpu.module @sgc_kernels`. This header holds what the
// emitters share: the spec and dedup table, the kernel under construction
// (its parameters, thread and block ids, the step state) and the cooperative
// building blocks (warp and block sums), plus the entry point of each kernel
// family (one .cpp each).
//
// Parameter convention (lib/abi/sgc/abi.h, ABI 2.2): parameter 0 is the step
// state (`memref<4xi64>`: position, token count, full-cache slots); then one
// memref per input of the launch, then one per output that is not updated
// in place. Token dimensions are static at the entry's max_tokens; kernels
// read the live count from the step state.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOGPU_KERNELS_H
#define SGC_COMPILER_CONVERSION_SGTOGPU_KERNELS_H

#include "compiler/Conversion/SGToGPU/CudaChip.h"
#include "compiler/Conversion/Common/IndexExpr.h"
#include "dialects/SG/IR/SGInterfaces.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <array>

namespace mlir::sgc::gpu_kernels {

/// Threads per warp on every NVIDIA GPU.
constexpr int64_t kWarp = 32;
/// Elements a thread takes at once in a block's pass over a row
/// (KernelBody::forRowChunks): 16 bytes of bf16 (one 128-bit load), 32 of
/// f32 (two).
constexpr int64_t kRowChunk = 8;

/// One launch an emitter asks for: a kernel, the sg values it reads and
/// writes (in parameter order after the step state) and its geometry.
struct KernelUse {
  gpu::GPUFuncOp kernel;
  SmallVector<Value> ins;
  /// Values the launch produces. One found in `inPlace` lives in the buffer
  /// of that input (a KV cache updated in place) and is no parameter.
  SmallVector<Value> outs;
  llvm::DenseMap<Value, Value> inPlace;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  /// The grid dimension with one block per token (0 or 1), or -1.
  int tokenGridDim = 0;
  /// Body ops this launch computes besides the one it started from (fused).
  SmallVector<Operation *> fused;
  /// Buffers the launch needs for itself, its last parameters (after the
  /// outputs): `scratch` ones live in the step's scratch region, `zeroed`
  /// ones in a region of the workspace that no other buffer uses, zero when
  /// the runtime allocates the workspace and left zero by every kernel that
  /// uses it (counters the last block of a grid resets).
  SmallVector<MemRefType> scratch, zeroed;
  /// Bytes of dynamic shared memory the kernel needs (its launch asks for
  /// them; above 48 KiB the runtime opts the kernel in).
  int64_t dynamicShared = 0;
  /// The launch's very last parameter is an i32 [1] buffer it writes the
  /// argmax of its logits row to (the decode LM head); the entry returns
  /// it to the runtime.
  bool writesArgmax = false;
};

/// The kernel attribute recording the dynamic shared memory it uses.
constexpr llvm::StringLiteral kDynamicSharedAttr = "sg.dynamic_shared_bytes";

/// The kernel being built: its entry block's values and helpers.
class KernelBody {
public:
  /// Starts the body of `func` with a builder that copies `outer`.
  KernelBody(const OpBuilder &outer, gpu::GPUFuncOp func, bool oneToken);

  /// Builds at the end of the kernel so far, at the kernel's location.
  ImplicitLocOpBuilder b;
  Location loc;
  gpu::GPUFuncOp func;
  /// The step state (memref<4xi64>) and the launch's parameters after it.
  Value state;
  SmallVector<Value> params;
  /// The call's token count (index): 1 in decode kernels, else read from the
  /// step state.
  Value numTokens;
  /// The call's start position (index), read from the step state.
  Value position();
  /// Whether the runtime reads the logits of a row in [t0, t0 + rows): the
  /// step state's first_logits_row is below t0 + rows (i1).
  Value rowsWanted(Value t0, int64_t rows);

  Value threadId(gpu::Dimension d);
  Value blockId(gpu::Dimension d);
  Value index(int64_t v);
  /// The value of index arithmetic (IndexExpr.h), computed here.
  Value index(const IndexExpr &e) { return e.emit(b); }
  Value f32(float v);
  /// Marks parameter `param` (an index into `params`) as never written and
  /// never aliased, so its loads are read-only (`ld.global.nc`; weights).
  void markReadOnly(unsigned param);
  /// A workgroup buffer of `shape` x `element` (16-byte aligned).
  Value sharedBuffer(ArrayRef<int64_t> shape, Type element);
  /// A workgroup buffer of `shape` x `element` at the start of the block's
  /// dynamic shared memory (one a kernel; for buffers over the static
  /// limit). The kernel records its bytes (kDynamicSharedAttr); the launch
  /// must ask for them (KernelUse::dynamicShared).
  Value dynamicSharedBuffer(ArrayRef<int64_t> shape, Type element);

  /// The sum of `v` (f32) over the 32 lanes of the warp, in every lane.
  Value warpSum(Value v);
  Value warpMax(Value v);
  /// The sum of `v` (f32) over the block's `threads` threads (a multiple of
  /// 32), in every thread; `scratch` is a workgroup f32 buffer of at least
  /// threads / 32 elements. Two barriers: every thread must call it.
  Value blockSum(Value v, int64_t threads, Value scratch);

  /// This thread's part of an RMSNorm: the f32 sum of squares of
  /// `load(i)` for i = start, start + step, ... < end (a vector's elements
  /// in order: one chain of f32 adds either way).
  Value sumOfSquares(Value start, Value end, Value step,
                     llvm::function_ref<Value(Value)> load);

  /// A block's pass over a [width] row (the gemv_rows and row_chain
  /// prologues): the columns in chunks of `n` = rowChunk(width), thread tid
  /// of `threads` the chunks from columns tid·n, (tid + threads)·n, ... <
  /// width: `body(c)` with each chunk's first column.
  static int64_t rowChunk(int64_t width);
  void forRowChunks(int64_t width, int64_t n, int64_t threads,
                    llvm::function_ref<void(Value)> body);
  /// forRowChunks' columns as sumOfSquares sums them (`load(c)`: the chunk).
  Value rowSumOfSquares(int64_t width, int64_t n, int64_t threads,
                        llvm::function_ref<Value(Value)> load);
  /// buf[idx..., c .. c + n): a vector<n x element> load, 16-byte aligned
  /// (rows and row chunks are: CUDA.md §3.1), or a scalar load for n = 1.
  Value loadChunk(Value buf, ValueRange idx, Value c, int64_t n);
  /// Stores loadChunk's value `v` at buf[idx..., c].
  void storeChunk(Value v, Value buf, ValueRange idx, Value c);
  /// RMSNorm's scale from the row's sum of squares: rsqrt(sum / width + eps).
  Value rmsScale(Value sum, int64_t width, double eps);

  /// A pair of bf16 elements, buf[idx..., col] and the next, as the i32
  /// register mma.sync takes (the lower element in the low half).
  Value bf16Pair(Value buf, ValueRange idx, Value col);
  /// Two bf16 values (or f32 ones, rounded) packed the same way.
  Value packBf16(Value lo, Value hi);
  /// D = A B + C for one 16x8 tile on the warp's tensor cores (mma.sync
  /// m16n8k16, A row-major, B "col" (K-major), bf16 products, f32 sums):
  /// a 4 i32, b 2 i32, c 4 f32 per lane in PTX's fragment layout.
  SmallVector<Value> mmaBf16(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                             ArrayRef<Value> c);

  /// `for (i = start; i < end; i += step)`, `body` gets i.
  void forRange(Value start, Value end, Value step,
                llvm::function_ref<void(Value)> body);
  /// `if (cond) body()`. A body with barriers needs a condition that is the
  /// same in every thread of the block (e.g. the block's row is live).
  void ifThen(Value cond, llvm::function_ref<void()> body);
  /// `a < b` on index values.
  Value lessThan(Value a, Value b);
  /// The KV cache slot of key position `j` (index): j mod window on a ring
  /// (window > 0), else j (sg::AttentionParts::window).
  Value cacheSlot(Value j, int64_t window);
  /// The first key a query at `position` (index) sees: on a sliding layer
  /// (window > 0) max(0, position + 1 - window), compared signed (early
  /// positions go below 0); else 0.
  Value firstKey(Value position, int64_t window);
  /// Runs `body` in the one block of a grid of `blocks` that counts itself
  /// in last at counters[slot] (an i32 of the zeroed region, which that
  /// block resets): every thread fences its global writes first, so the
  /// last block reads every block's. Barriers inside: every thread of the
  /// block must call it.
  void ifLastBlock(Value counters, Value slot, int64_t blocks,
                   llvm::function_ref<void()> body);
};

/// What the emitters of one module share.
class KernelModule {
public:
  KernelModule(ModuleOp module, gpu::GPUModuleOp kernels)
      : module(module), kernels(kernels) {}

  /// The kernel of `family` for `spec` (one per distinct spec): built on
  /// first use with parameters `params` (after the step state) and
  /// `block` threads, by `build`. The spec is printed on the kernel
  /// (`sg.kernel_spec`) and names it `<family>_<n>`.
  gpu::GPUFuncOp getOrCreate(StringRef family, DictionaryAttr spec,
                             ArrayRef<Type> params,
                             std::array<int64_t, 3> block, bool oneToken,
                             llvm::function_ref<void(KernelBody &)> build);

  /// The memref type a kernel sees for an sg value: its tensor type with
  /// the token dimension at `maxTokens`.
  MemRefType paramType(Value v, int64_t maxTokens) const;

  ModuleOp module;
  gpu::GPUModuleOp kernels;

private:
  llvm::DenseMap<Attribute, gpu::GPUFuncOp> bySpec;
  llvm::StringMap<unsigned> counts;
};

/// What kernel selection knows of a call: the entry's token bound and the
/// chip.
struct TargetContext {
  int64_t maxTokens;
  const CudaChip &chip;
  /// A decode entry: one token per call.
  bool oneToken() const { return maxTokens == 1; }
};

/// Where the emitters are called from: also the module the kernels go to.
struct EmitContext : TargetContext {
  EmitContext(KernelModule &kernels, int64_t maxTokens, const CudaChip &chip)
      : TargetContext{maxTokens, chip}, kernels(kernels) {}
  KernelModule &kernels;
};

/// A projection as the families see it (sg::ProjectionOpInterface: the
/// input, the optional fused RMSNorm, one or more weights whose rows are
/// concatenated (gated: gate and up over the same rows) and the epilogue),
/// with what the launch asks of it.
struct Projection : sg::ProjectionParts {
  using Epilogue = sg::ProjectionEpilogue;
  /// The LM head of a chunk: the blocks of rows below the step state's
  /// first_logits_row do nothing (only the wanted logits are computed).
  bool wantedRowsOnly = false;
  /// Output rows: the weights' rows summed (gated: the gate's).
  int64_t totalRows() const;
  /// The spec entries every projection kernel records.
  SmallVector<NamedAttribute> specAttrs(Builder &a) const;
};

/// `op` as a projection, or failure if it is none or one no CUDA kernel
/// takes (a bias, an [in, out] or rank > 2 weight).
FailureOr<Projection> matchProjection(Operation *op);

/// The RMSNorm scales of a projection block's tokens t0 + m, m < warps x
/// `tokensPerWarp`: warp w takes tokens [w·tokensPerWarp, +tokensPerWarp),
/// its lanes sum the squares of x's `width` columns (one warp sum a token),
/// lane 0 stores the scale in scales[m] (0 past the call's tokens); then a
/// barrier. The gemm_mma and gemm_ffma prologues.
void emitProjectionNormScales(KernelBody &k, const Projection &g, Value x,
                              int64_t width, Value t0, Value warp, Value lane,
                              int64_t tokensPerWarp, Value scales);

/// A projection's f32 dot product `v` (and, gated, the up row's `up`) as
/// the stored value of type `yType`, rounded where the reference rounds:
/// y = round(v), then softcap(y), or round(round(gelu(y)) · round(up)).
Value emitProjectionEpilogue(ImplicitLocOpBuilder &b, const Projection &g,
                             Value v, Value up, Type yType);

/// The body of a projection block of tokens [t0, t0 + blockTokens) and
/// output rows from n0 (a multiple of the weights' tile rows): nothing past
/// the call's tokens, nor (g.wantedRowsOnly) below its first wanted logits
/// row (uniform in a block, so barriers inside are too); else `normScales()`
/// when the projection normalizes, then `forWeight(w, rowBase)` for the
/// weight whose rows hold n0 (concatenated weights are whole tiles each; a
/// gated projection's block covers gate and up at once: weight 0).
void emitProjectionBlock(
    KernelBody &k, const Projection &g, Value t0, int64_t blockTokens,
    Value n0, llvm::function_ref<void()> normScales,
    llvm::function_ref<void(int w, Value rowBase)> forWeight);

/// A chain of rowwise ops (sg.rms_norm, add, mul, layer_scalar, softcap,
/// gelu_tanh over [tokens, width] rows): `first` and each next op that alone
/// uses the previous result (an RMSNorm only first: it needs the whole row).
struct RowChain {
  SmallVector<Operation *> ops;
  /// The first op's input, then the side inputs in first use.
  SmallVector<Value> ins;
  /// Per op, the indices into `ins` of its side inputs.
  SmallVector<SmallVector<unsigned>> sideParams;
  Value result;
  int64_t width() const;
  Type elementType() const;
  /// The spec's description of the ops.
  ArrayAttr steps(Builder &a) const;
};

/// The chain that starts at `first`, or failure.
FailureOr<RowChain> matchRowChain(Operation *first);

/// The buffers of the LM head's argmax: the logits row it reads back, the
/// per-block bests (f32 values, i32 ids: scratch [blocks]), the grid's
/// counter (the zeroed region, i32 [1]) and the token (i32 [1]).
struct ArgmaxBuffers {
  Value logits, partialValues, partialIds, counter, token;
};

/// Argmax.cpp: after a block has stored rows [rowBegin, rowEnd) of
/// logits[t], its best goes to the partials; the last of the grid's
/// `blocks` blocks writes the row's argmax (NaN never wins, ties go to the
/// lowest id) to token[0]. Barriers inside: every thread must call it.
void emitArgmaxEpilogue(KernelBody &k, const ArgmaxBuffers &a, Value t,
                        Value rowBegin, Value rowEnd, int64_t blocks,
                        int64_t threads);

/// The chain's row `t` in KernelBody::forRowChunks' chunks over the block's
/// `threads` threads, each handed to `store(c, value)` (c its first column,
/// value a vector of its rowChunk(width) elements, or a scalar for
/// rowChunk 1: KernelBody::storeChunk stores it); `params` hold `chain.ins`
/// in order, `scratch` is a workgroup f32 buffer of threads / 32 elements.
/// With an RMSNorm first it has barriers: every thread must call it.
void emitRowChainRow(KernelBody &k, const RowChain &chain,
                     ArrayRef<Value> params, Value t, int64_t threads,
                     Value scratch,
                     llvm::function_ref<void(Value, Value)> store);

//===----------------------------------------------------------------------===//
// Families (one .cpp each). Each returns the launch for `op` (and the ops it
// fuses), or failure after a diagnostic.
//===----------------------------------------------------------------------===//

/// Embed.cpp: sg.embed.
FailureOr<KernelUse> emitEmbed(Operation *op, EmitContext &ctx);
/// GemvRows.cpp: sg.linear, sg.norm_linear, sg.gated_mlp. With `prologue`
/// (a row chain whose result is the projection's input) the kernel computes
/// that input row itself from the chain's inputs and its first block stores
/// it (the chain's result is the launch's last output): one launch instead
/// of two (CUDA.md §1.3).
/// With `lmHead` (the projection writes the entry's logits; one weight)
/// a one-token launch also writes the argmax of its output row
/// (emitArgmaxEpilogue; KernelUse::writesArgmax), a chunk's computes only
/// the wanted rows (Projection::wantedRowsOnly).
FailureOr<KernelUse> emitGemvRows(Operation *op, EmitContext &ctx,
                                  const RowChain *prologue = nullptr,
                                  bool lmHead = false);
/// GemmMma.cpp: the same projections over a chunk of tokens on tensor cores
/// (mma.sync), where `gemmMmaApplies` (bf16 rows and weights, shapes in
/// whole tiles).
/// `lmHead`: as emitGemvRows' for a chunk.
bool gemmMmaApplies(Operation *op, const TargetContext &ctx);
FailureOr<KernelUse> emitGemmMma(Operation *op, EmitContext &ctx,
                                 bool lmHead = false);
/// GemmFfma.cpp: the same projections over a chunk of f32 rows with bf16
/// weights (--compute-dtype=f32), register-tiled f32 FMAs, where
/// `gemmFfmaApplies` (rows a multiple of 16 columns, weights of whole
/// 32-row tiles).
bool gemmFfmaApplies(Operation *op, const TargetContext &ctx);
FailureOr<KernelUse> emitGemmFfma(Operation *op, EmitContext &ctx,
                                  bool lmHead = false);
/// RowChain.cpp: sg.rms_norm, sg.add, sg.mul, sg.layer_scalar, sg.softcap,
/// sg.gelu_tanh, with the chain of such ops that follows.
FailureOr<KernelUse> emitRowChain(Operation *op, EmitContext &ctx);
/// QKNormRope.cpp: several sg.norm_rope (caches written in the pass when
/// `append`) and sg.kv_write ops in one launch, one grid row per head of
/// each in turn (a layer's q, k and v in one kernel).
FailureOr<KernelUse> emitHeadJobs(ArrayRef<Operation *> ops, EmitContext &ctx,
                                  bool append);
/// Attention.cpp: sg.sliding_attn, sg.full_attn where neither attention
/// family below applies (f32 chunks, image blocks).
FailureOr<KernelUse> emitAttention(Operation *op, EmitContext &ctx);
/// AttnDecode.cpp: the same ops for one query (decode), split over the
/// keys, where `attnDecodeApplies`.
bool attnDecodeApplies(Operation *op, const TargetContext &ctx);
/// Whether that kernel applies and computes the parts on tensor cores
/// (attn_decode_mma: bf16, 8 q heads a kv head).
bool attnDecodeUsesMma(Operation *op, const TargetContext &ctx);
FailureOr<KernelUse> emitAttnDecode(Operation *op, EmitContext &ctx);
/// AttnPrefill.cpp: the same ops over a chunk of bf16 queries on tensor
/// cores (mma.sync, GQA heads stacked in M), where `attnPrefillApplies`.
bool attnPrefillApplies(Operation *op, const TargetContext &ctx);
FailureOr<KernelUse> emitAttnPrefill(Operation *op, EmitContext &ctx);
/// KVWrite.cpp: `values` into `cache` at the call's positions (ring slots
/// when `window` > 0); `result` is the updated cache value.
FailureOr<KernelUse> emitKVWrite(Location loc, Value values, Value cache,
                                 Value result, int64_t window,
                                 EmitContext &ctx);

} // namespace mlir::sgc::gpu_kernels

#endif // SGC_COMPILER_CONVERSION_SGTOGPU_KERNELS_H
