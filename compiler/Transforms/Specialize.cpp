//===- Specialize.cpp - decode and prefill variants of @forward -----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_SPECIALIZEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

/// The most rows a batched decode step takes (sgc compile --decode-batch).
static constexpr int64_t kMaxDecodeBatch = 64;

/// `type` with its leading (token) dimension set to `tokens` when dynamic.
static Type withTokens(Type type, int64_t tokens) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0 ||
      !ShapedType::isDynamic(tensor.getDimSize(0)))
    return type;
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = tokens;
  return tensor.clone(shape);
}

/// Makes every activation of `func` carry exactly `tokens` tokens. Only
/// activations have a dynamic dimension, and it is always the first.
static void setTokenCount(func::FuncOp func, int64_t tokens) {
  func.walk([&](Operation *op) {
    for (OpResult result : op->getResults())
      result.setType(withTokens(result.getType(), tokens));
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        arg.setType(withTokens(arg.getType(), tokens));
  });
  auto type = func.getFunctionType();
  SmallVector<Type> inputs, results;
  for (Type t : type.getInputs())
    inputs.push_back(withTokens(t, tokens));
  for (Type t : type.getResults())
    results.push_back(withTokens(t, tokens));
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
}

/// Decode is causal and has no image rows (an image is prefilled whole):
/// the merge and the block masks go, and with them the image inputs (soft
/// tokens, blocks) that @forward ends with when the module has an image
/// component (its `sg.image` facts).
static void dropImageInputs(ModuleOp module, func::FuncOp func) {
  if (!sg::SGDialect::ImageAttrHelper(module.getContext()).getAttr(module))
    return;
  func.walk([](sg::MergeImageRowsOp merge) {
    merge.replaceAllUsesWith(merge.getX());
    merge.erase();
  });
  func.walk([](Operation *op) {
    if (auto attn = dyn_cast<sg::SlidingAttnOp>(op))
      attn.getBlocksMutable().clear();
    else if (auto attn = dyn_cast<sg::FullAttnOp>(op))
      attn.getBlocksMutable().clear();
  });
  unsigned n = func.getNumArguments();
  llvm::BitVector erase(n);
  erase.set(n - 2, n);
  (void)func.eraseArguments(erase);
}

/// The tensor type `type` with a leading dimension of `rows`.
static Type withLeading(Type type, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = rows;
  return tensor.clone(shape);
}

/// Whether `v` is an activation of a `rows`-row step: a tensor computed by
/// the step (not a weight) whose leading dimension is the rows.
static bool isStepActivation(Value v, int64_t rows) {
  auto tensor = dyn_cast<RankedTensorType>(v.getType());
  return tensor && tensor.getRank() > 0 && tensor.getDimSize(0) == rows &&
         !v.getDefiningOp<sg::WeightOp>();
}

/// Whether result `r` of a per-sequence op is a KV cache (updated in place)
/// rather than an activation row.
static bool isCacheResult(OpResult r) {
  if (isa<sg::KVWriteOp>(r.getOwner()))
    return true;
  if (auto fused = dyn_cast<sg::NormRopeOp>(r.getOwner()))
    return r == fused.getNewCache();
  return false;
}

/// Turns `func`, a copy of @forward with every activation `rows` tokens
/// (tokens, pos, 2L caches [, images]) -> (logits, 2L caches), into a
/// batched decode step of `rows` sequences, each at its own position with
/// its own caches: (tokens, pos_0 .. pos_{B-1}, the 2L caches of row 0,
/// of row 1, ...) -> (logits, the 2L caches of row 0, of row 1, ...).
/// Projections, norms and the MLP stay one op over all rows (each weight is
/// read once a step); from each split_heads to its merge_heads the ops run
/// once per row on that row (sg.take_row), as a one-token decode runs them,
/// and the rows are stacked again (sg.stack_rows) before o_proj.
static LogicalResult batchRows(func::FuncOp func, int64_t rows) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  unsigned numCaches = body.getNumArguments() - 2;
  if (ret.getNumOperands() != 1 + numCaches)
    return func.emitError("sg-specialize: expected (tokens, pos, caches) -> "
                          "(logits, caches) to batch");

  // Per-row copies of the position and the caches.
  llvm::DenseMap<Value, SmallVector<Value>> perRow;
  Value pos = body.getArgument(1);
  perRow[pos].push_back(pos);
  for (int64_t b = 1; b < rows; ++b)
    perRow[pos].push_back(
        body.insertArgument(1 + b, IntegerType::get(ctx, 64), loc));
  SmallVector<Value> caches(body.getArguments().drop_front(1 + rows));
  for (Value cache : caches)
    perRow[cache].push_back(cache);
  for (int64_t b = 1; b < rows; ++b)
    for (Value cache : caches)
      perRow[cache].push_back(body.addArgument(cache.getType(), loc));

  OpBuilder builder(ctx);
  SmallVector<Operation *> replaced;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    bool split = isa<sg::SplitHeadsOp>(op);
    bool sequenceOp = split || llvm::any_of(op.getOperands(), [&](Value v) {
                        return perRow.count(v);
                      });
    if (!sequenceOp)
      continue;
    if (op.getNumRegions() != 0)
      return op.emitError("sg-specialize: cannot run this op per sequence");
    builder.setInsertionPoint(&op);
    // The row ops belong to the op's block and layer (sg-outline-layers).
    auto tagged = [&](Operation *rowOp) -> Value {
      for (StringRef tag : {sg::SGDialect::BlockAttrHelper::getNameStr(),
                            sg::SGDialect::LayerAttrHelper::getNameStr()})
        if (Attribute attr = op.getAttr(tag))
          rowOp->setAttr(tag, attr);
      return rowOp->getResult(0);
    };
    SmallVector<SmallVector<Value>> results(op.getNumResults());
    for (int64_t b = 0; b < rows; ++b) {
      IRMapping map;
      for (Value operand : op.getOperands()) {
        if (auto it = perRow.find(operand); it != perRow.end())
          map.map(operand, it->second[b]);
        else if (isStepActivation(operand, rows))
          map.map(operand, tagged(sg::TakeRowOp::create(
                               builder, op.getLoc(),
                               withLeading(operand.getType(), 1), operand,
                               builder.getI64IntegerAttr(b))));
      }
      Operation *clone = builder.clone(op, map);
      for (OpResult r : clone->getResults()) {
        if (!isCacheResult(r) && isStepActivation(r, rows))
          r.setType(withLeading(r.getType(), 1));
        results[r.getResultNumber()].push_back(r);
      }
    }
    // merge_heads ends the per-sequence part: its rows are stacked again.
    if (isa<sg::MergeHeadsOp>(op)) {
      Value stacked = tagged(sg::StackRowsOp::create(
          builder, op.getLoc(), op.getResult(0).getType(), results[0]));
      op.getResult(0).replaceAllUsesWith(stacked);
      op.erase();
      continue;
    }
    for (OpResult r : op.getResults())
      perRow[r] = results[r.getResultNumber()];
    replaced.push_back(&op);
  }

  // The logits, then each row's caches.
  SmallVector<Value> returned = {ret.getOperand(0)};
  for (int64_t b = 0; b < rows; ++b)
    for (Value v : ret.getOperands().drop_front()) {
      auto it = perRow.find(v);
      if (it == perRow.end())
        return func.emitError("sg-specialize: a returned cache is not "
                              "written per sequence");
      returned.push_back(it->second[b]);
    }
  builder.setInsertionPoint(ret);
  func::ReturnOp::create(builder, ret.getLoc(), returned);
  ret.erase();
  for (Operation *op : llvm::reverse(replaced)) {
    if (!op->use_empty())
      return op->emitError("sg-specialize: a per-sequence value is used "
                           "outside its sequence's part of the layer");
    op->erase();
  }
  SmallVector<Type> results;
  for (Value v : returned)
    results.push_back(v.getType());
  func.setFunctionType(
      FunctionType::get(ctx, body.getArgumentTypes(), results));
  return success();
}

namespace {
struct SpecializePass : public sgc::impl::SpecializePassBase<SpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward)
      return; // Nothing to specialize (a module of kernels, say).
    if (maxPrefillChunk < 1) {
      module.emitError("max-prefill-chunk must be >= 1, got ")
          << maxPrefillChunk;
      return signalPassFailure();
    }
    OpBuilder b(forward);
    sg::SGDialect::VariantAttrHelper variantAttr(&getContext());
    sg::SGDialect::MaxTokensAttrHelper maxTokensAttr(&getContext());
    auto prefill = cast<func::FuncOp>(b.clone(*forward));
    prefill.setSymName("prefill");
    variantAttr.setAttr(prefill, b.getStringAttr("prefill"));
    maxTokensAttr.setAttr(prefill, b.getI64IntegerAttr(maxPrefillChunk));

    auto decode = cast<func::FuncOp>(b.clone(*forward));
    decode.setSymName("decode");
    variantAttr.setAttr(decode, b.getStringAttr("decode"));
    maxTokensAttr.setAttr(decode, b.getI64IntegerAttr(1));
    setTokenCount(decode, 1);
    dropImageInputs(module, decode);

    // Batched decode steps, one per size the driver asked for (1 is
    // @decode itself).
    if (auto sizes = sg::SGDialect::DecodeBatchAttrHelper(&getContext())
                         .getAttr(module)) {
      for (int64_t rows : sizes.asArrayRef()) {
        if (rows == 1)
          continue;
        if (rows < 1 || rows > kMaxDecodeBatch) {
          module.emitError("sg-specialize: a decode batch of ")
              << rows << " rows is outside [1, " << kMaxDecodeBatch << "]";
          return signalPassFailure();
        }
        b.setInsertionPoint(forward);
        auto batched = cast<func::FuncOp>(b.clone(*forward));
        batched.setSymName(("decode_b" + Twine(rows)).str());
        variantAttr.setAttr(batched, b.getStringAttr("decode_batch"));
        maxTokensAttr.setAttr(batched, b.getI64IntegerAttr(rows));
        sg::SGDialect::BatchInvariantAttrHelper(&getContext())
            .setAttr(batched, b.getUnitAttr());
        setTokenCount(batched, rows);
        dropImageInputs(module, batched);
        if (failed(batchRows(batched, rows)) || failed(verify(batched)))
          return signalPassFailure();
      }
    }
    forward.erase();
    if (failed(verify(decode)))
      return signalPassFailure();
  }
};
} // namespace
