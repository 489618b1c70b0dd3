//===- ExpandBf16Rounding.cpp - f32 -> bf16 as vector integer code -------===//
//
// Part of sgc. Every rounding of a vector of f32 to bf16 (arith.truncf,
// round to nearest even) becomes integer arithmetic on the f32 bits, as arith-expand's bf16
// expansion does, with one difference: a NaN is replaced by the quiet NaN
// 0x7fc00000 *before* the rounding (a select on f32 lanes) instead of its
// result by 0x7fc0 after it (a select on i16 lanes). The bits are the same:
// 0x7fc00000 rounds to 0x7fc0. LLVM's InstCombine turns the i16 select into a
// select on bfloat lanes, which an AVX2 target (the x86-64-v3 variant, the
// CUDA target's host emulator) cannot select in vectors: it compared and
// moved each lane alone (vucomiss + cmovp), 4,192 times in gemma-4-31B-it's
// full-attention kernel alone, which made that function 218 KB of code and
// ~1.5 s of the compile. The f32 select stays one vblendvps.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/bit.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_EXPANDBF16ROUNDINGPASS
#include "compiler/Target/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;

namespace {

/// A splat constant of the vector type `type`.
Value splatOf(PatternRewriter &rewriter, Location loc, VectorType type,
              TypedAttr scalar) {
  return arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(type, Attribute(scalar)));
}

struct ExpandTruncF32ToBf16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getIn().getType(), out = op.getType();
    // Vectors only: a scalar's i16 select is one cmov, while its f32 select
    // became a masked vmovss whose result then crossed to an integer
    // register, which stalled bench/gemv's row kernels 5x on znver4.
    if (!isa<VectorType>(in) || !getElementTypeOrSelf(in).isF32() ||
        !getElementTypeOrSelf(out).isBF16())
      return failure();
    if (op.getRoundingmodeAttr() &&
        *op.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return failure();
    Location loc = op.getLoc();
    auto i32 = cast<VectorType>(in).clone(rewriter.getI32Type());
    auto i16 = cast<VectorType>(in).clone(rewriter.getI16Type());
    auto i32Const = [&](int64_t v) {
      return splatOf(rewriter, loc, i32, rewriter.getI32IntegerAttr(v));
    };
    // The constants first, together (no folding runs after this pattern).
    Value quietNan = splatOf(
        rewriter, loc, cast<VectorType>(in),
        rewriter.getF32FloatAttr(llvm::bit_cast<float>(0x7fc00000u)));
    Value bias = i32Const(0x7fff), one = i32Const(1), c16 = i32Const(16);
    Value x = op.getIn();
    Value isNan =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    x = arith::SelectOp::create(rewriter, loc, isNan, quietNan, x);
    // Round to nearest even: add 0x7fff plus bit 16, keep the high half; a
    // carry into the exponent is the rounding up, infinities stay.
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, x);
    Value bit16 = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, c16), one);
    Value biased = arith::AddIOp::create(
        rewriter, loc, bits, arith::AddIOp::create(rewriter, loc, bit16, bias));
    Value high = arith::TruncIOp::create(
        rewriter, loc, i16, arith::ShRUIOp::create(rewriter, loc, biased, c16));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, out, high);
    return success();
  }
};

struct ExpandBf16RoundingPass
    : public sgc::impl::ExpandBf16RoundingPassBase<ExpandBf16RoundingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandTruncF32ToBf16>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sgc::onlyRewrites())))
      signalPassFailure();
  }
};

} // namespace
