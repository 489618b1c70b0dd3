//===- Specialize.cpp - decode and prefill variants of @forward -----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_SPECIALIZEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

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
    forward.erase();
    if (failed(verify(decode)))
      return signalPassFailure();
  }
};
} // namespace
