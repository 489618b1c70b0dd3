//===- Linear.cpp - linears (plain and fused) as tiles and rows -----------===//
//
// Part of sgc. sg.linear, sg.norm_linear and sg.gated_mlp each become two
// calls in the body: `@sgc_rows_…(x, [norm weight], xs)` widens the input
// rows to f32 once (normalizing them first when the op carries the norm,
// rounded exactly as sg.rms_norm rounds), then the dispatcher of the kernel
// `@sgc_<kind>_…(xs, weights…, outputs…, row_begin, row_end)`, which the
// emitted glue runs on the runtime's threads over the output rows.
//
// A chunk of at least kTileTokens tokens (prefill) goes through register
// tiles: per block of kTileRows output rows the weights are widened once
// into an f32 panel [K][kTileRows], and each tile of kTileTokens tokens x
// kTileRows rows keeps its accumulators in registers over the whole K,
// broadcasting one activation per token and reusing one panel vector for
// every token: 6 x 16 f32 accumulators are 12 of AVX2's 16 registers, and
// each loaded value feeds 6 or 2 FMAs instead of one. The sum over K runs in
// order k = 0..K-1 per output.
//
// With bf16 activations and weights (the bf16 compute dtype) and an even K,
// the kernel also carries a second tile path for CPUs with AVX512-BF16:
// each step is one vdpbf16ps (x86vector.avx512.dot) per token, 16 rows x
// one K pair, over a panel of the weights' bf16 pairs [K/2][kTileRows x 2]
// and the activation pair of each token broadcast from a bf16 copy of the
// rows. A bf16 x bf16 product is exact in f32 and the activations already
// are bf16 values, so only the order of the f32 sum changes (pairs). Tiles
// are kDotTileTokens x kTileRows; a block of fewer than kTileRows rows is
// computed with zero rows and only its rows stored, so every row sums alike
// however the rows were split over the threads. Which path runs is the
// global @sgc_cpu_bf16_dot, which the object emitter defines per CPU variant
// (LLVM folds the branch away; the baseline variant never sees the
// instruction).
//
// Fewer tokens (decode), and the rows of a range that fill no whole block,
// walk one weight row at a time (row-major bf16, as the checkpoint stores
// it) with 4 independent vector<16xf32> accumulators along K: the structure
// CPU.md measured at 93-96 % of one core's read bandwidth. Each row serves
// every token of the chunk while it is in L1. In a kernel with the bf16
// paths, a variant with AVX512-BF16 runs the rows of chunks under
// kTileTokens (decode) as vdpbf16ps over the row's bf16 pairs and the bf16
// copy of the input (no widening; CPU.md §3d: 92-94 % of 2-thread read
// bandwidth against 80-88 % for the f32 chains); its leftover rows of
// longer chunks go through zero-padded bf16 tiles. Decode and prefill then
// share one kernel per shape.
//
// Epilogues (the softcap of the LM head; GELU-tanh times up for the gated
// MLP) run on the rounded dot products in both paths, so fused and unfused
// ops round at the same points.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Int16Tiles.h"
#include "compiler/Conversion/SGToCPU/Int8Dot.h"
#include "compiler/Conversion/SGToCPU/LinearSpec.h"
#include "compiler/Conversion/SGToCPU/WeightRead.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;


namespace {

/// The function `@sgc_rows_…(x, [norm weight], xs)`: xs[s, :] = f32 of
/// input row s, normalized first when the op carries the norm (emitRmsScale,
/// then x·r·(offset + w) rounded to the input type: what sg.rms_norm
/// computes), 16 columns at a time; xs's rows past x's are zeroed (the
/// padding of the last token tile). With `bf16Copy`, xb gets the same rows
/// as bf16 (exact: they are bf16 values).
func::FuncOp getOrCreateInputRows(OpBuilder &outer, ModuleOp module,
                                  const InputSpec &spec) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  std::string name = "sgc_" + spec.name();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {MemRefType::get({dyn, spec.k}, spec.xType)};
  if (spec.normWeight)
    args.push_back(MemRefType::get({spec.k}, spec.normType));
  args.push_back(f32RowsType(b.getContext(), spec.k));
  if (spec.bf16Copy)
    args.push_back(bf16RowsType(b.getContext(), spec.k));
  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func = createPrivateFunction(b, module, name, args);
  Block *entry = &func.getBody().front();
  Value x = entry->getArgument(0);
  Value normWeight = spec.normWeight ? entry->getArgument(1) : Value();
  Value xs = entry->getArgument(spec.normWeight ? 2 : 1);
  Value xb = spec.bf16Copy ? entry->getArguments().back() : Value();
  auto storeRow = [&](ImplicitLocOpBuilder &b, Value v, Value s, Value col) {
    emitRowStore(b, toF32(b, v), xs, ValueRange{s}, col);
    if (xb)
      emitRowStore(b, roundTo(b, v, b.getBF16Type()), xb, ValueRange{s}, col);
  };

  Value zero = constIndex(b, 0);
  Value kIdx = constIndex(b, spec.k);
  Value tokens = dimOf(b, x, 0);
  emitFor(b, zero, tokens, [&](ImplicitLocOpBuilder &b, Value s) {
    auto load = [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
      return emitRowLoad(b, x, ValueRange{s}, col, lanes);
    };
    Value r = spec.norm ? emitRmsScale(b, spec.k, spec.eps, load) : Value();
    emitRowChunks(
        b, spec.k, [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes) {
          Value v = load(b, col, lanes);
          if (spec.norm) {
            Value w = normWeight
                          ? emitRowLoad(b, normWeight, ValueRange{}, col, lanes)
                          : Value();
            v = emitNormalize(b, v, r, w, spec.offset == 1, spec.xType);
          }
          storeRow(b, v, s, col);
        });
  });
  emitFor(b, tokens, dimOf(b, xs, 0), [&](ImplicitLocOpBuilder &b, Value s) {
    emitFor(b, zero, kIdx, [&](ImplicitLocOpBuilder &b, Value col) {
      storeRow(b, constF32(b, 0.0f), s, col);
    });
  });
  func::ReturnOp::create(b);
  return func;
}

/// The dispatcher `sgc_dispatch_<kernel>(x, …)`: declared here, defined in
/// the emitted glue, which runs the kernel's rows on the runtime's threads.
func::FuncOp getOrCreateDispatcher(OpBuilder &b, ModuleOp module,
                                   const KernelSpec &spec) {
  std::string kernelName = "sgc_" + spec.name();
  std::string name = "sgc_dispatch_" + spec.name();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  func::FuncOp kernel = buildKernel(b, module, spec, kernelName);
  return declareDispatcher(b, module, kernel, name, spec.totalRows());
}

/// The int8 activations of `xs` for `spec`'s weights, where the variant has
/// the int8 rows and the call takes the row path (decode) or the i16 tiles
/// (Int16Tiles.h); otherwise an empty buffer.
Value emitInt8Activations(ImplicitLocOpBuilder &b, FunctionLowering &state,
                          const KernelSpec &spec, Value xs, Value tokens,
                          Value padded) {
  Value tiles = tilesInUse(b, spec, tokens);
  Value quantize = arith::XOrIOp::create(
      b, tiles, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
  if (usesInt16Tiles(spec.wType, spec.k))
    quantize = arith::OrIOp::create(
        b, quantize,
        arith::AndIOp::create(b, tiles, loadBf16DotFlag(b, state.module)));
  quantize =
      arith::AndIOp::create(b, quantize, loadInt8DotFlag(b, state.module));
  Value rows = arith::SelectOp::create(b, quantize, padded, constIndex(b, 0));
  Value records =
      memref::AllocOp::create(b, int8ActivationType(b.getContext(), spec.k),
                              ValueRange{rows}, b.getI64IntegerAttr(64));
  state.allocated.push_back(records);
  func::CallOp::create(
      b, getOrCreateQuantRows(b, state.module, spec.k, spec.wType),
      ValueRange{xs, records});
  return records;
}

} // namespace

static LogicalResult lowerLinear(Operation *op, FunctionLowering &state) {
  Location loc = op->getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  InputSpec input;
  KernelSpec spec;
  Value x, normWeight;
  SmallVector<Value> weights;
  auto projection = dyn_cast<sg::ProjectionOpInterface>(op);
  if (!projection)
    return op->emitError("not a linear-family op");
  sg::ProjectionParts parts = projection.getProjection();
  x = parts.x;
  normWeight = parts.normWeight;
  weights = parts.weights;
  Value bias = parts.bias;
  if (bias)
    spec.biasType = cast<RankedTensorType>(bias.getType()).getElementType();
  if (parts.norm) {
    input.norm = true;
    input.eps = parts.eps;
    input.offset = parts.normOffset;
  }
  spec.epilogue = parts.epilogue;
  spec.cap = parts.cap;
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() != 2)
    return op->emitError("convert-sg-to-cpu: linears need a [tokens, in] "
                         "input, got rank ")
           << xType.getRank();
  input.k = spec.k = xType.getDimSize(1);
  input.xType = xType.getElementType();
  if (normWeight) {
    input.normWeight = true;
    input.normType = cast<RankedTensorType>(normWeight.getType()).getElementType();
  }
  spec.wType = cast<RankedTensorType>(weights.front().getType()).getElementType();
  spec.yType = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  // The kernels read [out, in] weights: a weight of rank > 2 is viewed as
  // one, an [in, out] weight copied transposed into one.
  SmallVector<Value> weightBuffers;
  for (Value w : weights)
    weightBuffers.push_back(state.lookup(w));
  if (auto linear = dyn_cast<sg::LinearOp>(op)) {
    Value &w = weightBuffers.front();
    auto wType = cast<MemRefType>(w.getType());
    if (linear.isInOut()) {
      Value t = state.allocTemp(loc, {wType.getDimSize(1), wType.getDimSize(0)},
                                wType.getElementType());
      Value zero = constIndex(b, 0);
      emitFor(b, zero, constIndex(b, wType.getDimSize(0)),
              [&](ImplicitLocOpBuilder &b, Value k) {
                emitFor(
                    b, zero, constIndex(b, wType.getDimSize(1)),
                    [&](ImplicitLocOpBuilder &b, Value n) {
                      Value v = memref::LoadOp::create(b, w, ValueRange{k, n});
                      memref::StoreOp::create(b, v, t, ValueRange{n, k});
                    });
              });
      w = t;
    } else if (wType.getRank() > 2) {
      ReassociationIndices trailing;
      for (int64_t d = 1; d < wType.getRank(); ++d)
        trailing.push_back(d);
      w = memref::CollapseShapeOp::create(
          b, w, ArrayRef<ReassociationIndices>{{0}, trailing});
    }
  }
  for (Value w : weightBuffers)
    spec.rows.push_back(cast<MemRefType>(w.getType()).getDimSize(0));
  // The bf16 paths (tiles, and pair rows for decode) where they can run:
  // bf16 rows, and weights that are bf16 or become bf16 pairs in registers
  // (f16, block encodings: as exact as the f32 path, which rounds them to
  // bf16 too, and half its instructions a weight), K in pairs. Decode and
  // prefill then call one kernel per shape.
  // Weights of several encodings (a GGUF's Q4_K_M mix: attn_v in Q6_K on
  // some layers, q and k in Q4_K) take one kernel per run of equal
  // encodings, all reading the same input rows.
  SmallVector<Type> wTypes;
  for (Value w : weights)
    wTypes.push_back(cast<RankedTensorType>(w.getType()).getElementType());
  if (spec.epilogue == Epilogue::GatedGelu && wTypes[0] != wTypes[1])
    return op->emitError("convert-sg-to-cpu: a gated MLP's gate and up "
                         "weights differ in encoding (")
           << wTypes[0] << ", " << wTypes[1]
           << "); sg-fuse leaves such a pair unfused";
  spec.bf16Dot = input.bf16Copy =
      input.xType.isBF16() && llvm::all_of(wTypes, hasWeightPairs) &&
      spec.k % 2 == 0;
  // A batched decode step's projections (sg-specialize marks its bodies).
  if (auto body = op->getParentOfType<func::FuncOp>())
    spec.rowsOnly = static_cast<bool>(
        sg::SGDialect::BatchInvariantAttrHelper(op->getContext())
            .getAttr(body));

  // xs (and xb): the input rows, padded to whole token tiles of either path
  // when the kernel will use tiles (kDotTileTokens is a multiple of
  // kTileTokens).
  Value tokens = dimOf(b, state.lookup(x), 0);
  Value pad = constIndex(b, spec.bf16Dot ? kDotTileTokens : kTileTokens);
  Value tiled = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, tokens,
                                      constIndex(b, kTileTokens));
  Value roundedUp = arith::MulIOp::create(
      b, Value(arith::CeilDivUIOp::create(b, tokens, pad)), pad);
  Value padded = arith::SelectOp::create(b, tiled, roundedUp, tokens);
  SmallVector<Value> inputRows;
  for (Type type : {b.getF32Type(), b.getBF16Type()}) {
    if (type.isBF16() && !spec.bf16Dot)
      break;
    inputRows.push_back(memref::AllocOp::create(
        b,
        type.isBF16() ? bf16RowsType(b.getContext(), input.k)
                      : f32RowsType(b.getContext(), input.k),
        ValueRange{padded}, b.getI64IntegerAttr(64)));
    state.allocated.push_back(inputRows.back());
  }
  SmallVector<Value> rowArgs = {withDynamicTokens(b, state.lookup(x))};
  if (normWeight)
    rowArgs.push_back(state.lookup(normWeight));
  llvm::append_range(rowArgs, inputRows);
  func::CallOp::create(b, getOrCreateInputRows(b, state.module, input),
                       rowArgs);
  SmallVector<Value> outputs;
  for (Value result : op->getResults()) {
    Value buffer = state.bufferFor(loc, result);
    state.buffers.map(result, buffer);
    outputs.push_back(withDynamicTokens(b, buffer));
  }
  // One kernel per run of weights of one encoding; a gated MLP's pair is one
  // run with one output.
  for (size_t first = 0; first < weights.size();) {
    size_t end = first + 1;
    while (end < weights.size() && wTypes[end] == wTypes[first])
      ++end;
    KernelSpec run = spec;
    run.wType = wTypes[first];
    run.rows.assign(spec.rows.begin() + first, spec.rows.begin() + end);
    run.int8Dot = run.bf16Dot && hasInt8Dot(run.wType, run.k);
    SmallVector<Value> args = {state.exec};
    llvm::append_range(args, inputRows);
    if (run.int8Dot)
      args.push_back(emitInt8Activations(b, state, run, inputRows.front(),
                                         tokens, padded));
    llvm::append_range(args, ArrayRef(weightBuffers).slice(first, end - first));
    if (bias)
      args.push_back(state.lookup(bias));
    if (run.epilogue == Epilogue::GatedGelu)
      args.push_back(outputs.front());
    else
      llvm::append_range(args, ArrayRef(outputs).slice(first, end - first));
    func::CallOp::create(b, getOrCreateDispatcher(b, state.module, run), args);
    first = end;
  }
  return success();
}

ArrayRef<OpLowering> lowering::projectionLowerings() {
  // One lowering for every projection, through their interface.
  static const OpLowering table[] = {
      {TypeID::get<sg::LinearOp>(), lowerLinear},
      {TypeID::get<sg::NormLinearOp>(), lowerLinear},
      {TypeID::get<sg::GatedMLPOp>(), lowerLinear}};
  return table;
}
